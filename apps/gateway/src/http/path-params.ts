import type { z } from 'zod';
import { ValidationFailedError, toIssues } from '@parley/contracts';

/**
 * Parses one path parameter. Its issues name the parameter as it appears in the route (`id`,
 * `name`), where parsing the bare value would name only `(root)`.
 */
export function parsePathParam<T extends z.ZodType>(schema: T, value: string, param: string, what: string): z.infer<T> {
  const result = schema.safeParse(value);
  if (!result.success) {
    throw new ValidationFailedError(
      what,
      toIssues(result.error).map((issue) => ({ ...issue, field: issue.field === '(root)' ? param : `${param}.${issue.field}` })),
    );
  }
  return result.data;
}
