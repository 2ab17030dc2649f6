import { createHash } from 'node:crypto';

/** JSON with object keys sorted at every level, so equal arguments always give the same text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) {
    return value.map(sortKeys);
  }
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]),
    );
  }
  return value;
}

/** SHA-256 (hex) of the canonical JSON of a call's arguments: what the audit records was approved and run. */
export function argsDigest(input: Record<string, unknown>): string {
  return createHash('sha256').update(canonicalJson(input)).digest('hex');
}
