import type { z } from 'zod';
import { ValidationFailedError, parseOrThrow, type ErrorIssue } from '@parley/contracts';

/**
 * Express gives a repeated query key as an array; a query field is one value, so a repeated one is
 * refused by name and reason before the schema would call it the wrong type.
 */
export function parseQuery<T extends z.ZodType>(schema: T, query: unknown): z.infer<T> {
  const issues: ErrorIssue[] = Object.entries((query ?? {}) as Record<string, unknown>)
    .filter(([, value]) => Array.isArray(value))
    .map(([field]) => ({ field, reason: 'given more than once: send it once' }));
  if (issues.length > 0) {
    throw new ValidationFailedError('query', issues);
  }
  return parseOrThrow(schema, query ?? {}, 'query');
}
