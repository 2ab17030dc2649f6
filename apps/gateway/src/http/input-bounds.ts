import type { NextFunction, Request, Response } from 'express';
import { LIMITS, ParleyError } from '@parley/contracts';

/**
 * How deeply a JSON body or a socket.io message may nest objects and arrays. `{}` and `[]` are one
 * level, `{ "a": [] }` two. No schema of the API needs more than a few; 32 leaves room for the
 * free-form `input` of a tool approval.
 */
export const MAX_NESTING_DEPTH = LIMITS.nestingDepth;

/**
 * True when `value` nests objects or arrays more than `limit` levels deep. Iterative, so a hostile
 * value nested a million levels deep costs a linear walk and no stack; binary payloads are leaves.
 */
export function nestedDeeperThan(value: unknown, limit: number = MAX_NESTING_DEPTH): boolean {
  const pending: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const current = next.value;
    if (current === null || typeof current !== 'object' || ArrayBuffer.isView(current) || current instanceof ArrayBuffer) {
      continue;
    }
    const depth = next.depth + 1;
    if (depth > limit) {
      return true;
    }
    const children: unknown[] = Array.isArray(current) ? current : Object.values(current);
    for (const child of children) {
      if (child !== null && typeof child === 'object') {
        pending.push({ value: child, depth });
      }
    }
  }
  return false;
}

/** The error for a body or message nested too deeply: a 400 `bad_request`, like the other body-parser errors. */
export function tooDeepError(what: string): ParleyError {
  return new ParleyError('bad_request', `${what} is nested too deeply (more than ${MAX_NESTING_DEPTH} levels of objects and arrays)`);
}

/** Express middleware, after the JSON parser: refuses a parsed body nested too deeply before any route runs. */
export function rejectDeepBodies(req: Request, _res: Response, next: NextFunction): void {
  const body: unknown = req.body;
  next(body !== null && typeof body === 'object' && nestedDeeperThan(body) ? tooDeepError('request body') : undefined);
}
