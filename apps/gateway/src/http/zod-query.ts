import type { z } from 'zod';
import { parseOrThrow } from '@parley/contracts';

/** Express gives repeated query keys as arrays; a query field must be one value. */
export function parseQuery<T extends z.ZodType>(schema: T, query: unknown): z.infer<T> {
  return parseOrThrow(schema, query ?? {}, 'query');
}
