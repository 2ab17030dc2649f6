import type { z } from 'zod';
import { truncateUtf8 } from './utf8';

export type Checked<T> = { ok: true; value: T } | { ok: false; error: string };

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Validates a tool's input; the error names each offending field, e.g. `invalid read_file input: path: is required`
 * or `invalid http_request input: data: unknown field` (tool input schemas are strict: a field the tool does not
 * know is refused, never dropped, so what is approved and what runs is what the model meant).
 */
export function checkInput<T extends z.ZodType>(tool: string, schema: T, input: unknown): Checked<z.output<T>> {
  const parsed = parseInput(schema, input);
  if (parsed.ok) {
    return parsed;
  }
  const problems = parsed.issues.map(({ field, reason }) => (field === '' ? reason : `${field}: ${reason}`));
  return { ok: false, error: `invalid ${tool} input: ${problems.join('; ')}` };
}

/** A field of a tool's input and what is wrong with it; the field is a dotted path, '' for the input as a whole. */
export interface InputIssue {
  field: string;
  reason: string;
}

/** A tool's input parsed, or each of its problems by field (what {@link checkInput} words as one error). */
export function parseInput<T extends z.ZodType>(schema: T, input: unknown): { ok: true; value: z.output<T> } | { ok: false; issues: InputIssue[] } {
  if (!isRecord(input)) {
    return { ok: false, issues: [{ field: '', reason: 'expected a JSON object' }] };
  }
  const parsed = schema.safeParse(input);
  if (parsed.success) {
    return { ok: true, value: parsed.data };
  }
  const issues = parsed.error.issues.flatMap((issue) => {
    const path = issue.path.map(String);
    // An unknown key is reported on its parent object; name the key itself, as any other field.
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ field: [...path, key].join('.'), reason: 'unknown field' }));
    }
    return [{ field: path.join('.'), reason: issue.message }];
  });
  return { ok: false, issues };
}

/** Trimmed and cut to maxBytes when a string; anything else is left for the schema to report. */
export function trimAndBound(value: unknown, maxBytes: number): unknown {
  return typeof value === 'string' ? truncateUtf8(value.trim(), maxBytes).trimEnd() : value;
}
