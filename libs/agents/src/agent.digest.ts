import { createHash } from 'node:crypto';
import type { AgentDefinition } from '@parley/contracts';
import { canonicalJson } from '@parley/tools';

/** A definition's canonical JSON (defaults filled in, keys sorted) and its SHA-256: the version's identity. */
export function digestDefinition(definition: AgentDefinition): { canonical: string; digest: string; sizeBytes: number } {
  const canonical = canonicalJson(definition);
  return { canonical, digest: createHash('sha256').update(canonical).digest('hex'), sizeBytes: Buffer.byteLength(canonical) };
}
