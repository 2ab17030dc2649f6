import type { z } from 'zod';
import { truncateUtf8 } from './utf8';

export type Checked<T> = { ok: true; value: T } | { ok: false; error: string };

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Validates a tool's input; the error names each offending field, e.g. `invalid read_file input: path: is required`. */
export function checkInput<T extends z.ZodType>(tool: string, schema: T, input: unknown): Checked<z.output<T>> {
  if (!isRecord(input)) {
    return { ok: false, error: `invalid ${tool} input: expected a JSON object` };
  }
  const parsed = schema.safeParse(input);
  if (parsed.success) {
    return { ok: true, value: parsed.data };
  }
  const problems = parsed.error.issues.map((issue) => {
    const field = issue.path.map(String).join('.');
    return field === '' ? issue.message : `${field}: ${issue.message}`;
  });
  return { ok: false, error: `invalid ${tool} input: ${problems.join('; ')}` };
}

/** Trimmed and cut to maxBytes when a string; anything else is left for the schema to report. */
export function trimAndBound(value: unknown, maxBytes: number): unknown {
  return typeof value === 'string' ? truncateUtf8(value.trim(), maxBytes).trimEnd() : value;
}
