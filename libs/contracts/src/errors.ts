import { z } from 'zod';

export const ErrorCodeSchema = z.enum([
  'bad_request',
  'validation_failed',
  'unauthenticated',
  'forbidden',
  'not_found',
  'conflict',
  'invalid_answer',
  'payload_too_large',
  'unsupported_media_type',
  'rate_limited',
  'unavailable',
  'internal',
]);
export type ErrorCode = z.infer<typeof ErrorCodeSchema>;

export const ErrorIssueSchema = z.object({ field: z.string(), reason: z.string() });
export type ErrorIssue = z.infer<typeof ErrorIssueSchema>;

/** The one error shape of every HTTP reply and socket.io ack. */
export const ErrorBodySchema = z.object({
  error: z.object({
    code: ErrorCodeSchema,
    message: z.string(),
    details: z.unknown().optional(),
  }),
});
export type ErrorBody = z.infer<typeof ErrorBodySchema>;

const STATUS: Record<ErrorCode, number> = {
  bad_request: 400,
  validation_failed: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  invalid_answer: 422,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  unavailable: 503,
  internal: 500,
};

/** Base of every error Parley raises on purpose; carries a stable code and an HTTP status. */
export class ParleyError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
    this.status = STATUS[code];
  }

  toBody(): ErrorBody {
    return {
      error: { code: this.code, message: this.message, ...(this.details === undefined ? {} : { details: this.details }) },
    };
  }
}

export class ValidationFailedError extends ParleyError {
  constructor(where: string, readonly issues: ErrorIssue[]) {
    super('validation_failed', `invalid ${where}: ${issues.map((i) => `${i.field}: ${i.reason}`).join('; ')}`, { issues });
  }
}

export class InvalidAnswerError extends ParleyError {
  constructor(readonly issues: ErrorIssue[]) {
    super('invalid_answer', `invalid answer: ${issues.map((i) => `${i.field}: ${i.reason}`).join('; ')}`, { issues });
  }
}

export class NotFoundError extends ParleyError {
  constructor(what: string, id: string) {
    super('not_found', `${what} ${id} not found`);
  }
}

export class UnauthenticatedError extends ParleyError {
  constructor(reason: string) {
    super('unauthenticated', reason);
  }
}

export class ForbiddenError extends ParleyError {
  constructor(reason: string) {
    super('forbidden', reason);
  }
}

export class ConflictError extends ParleyError {
  constructor(message: string, details?: unknown) {
    super('conflict', message, details);
  }
}

/** The limits of a tenant, of a user within it, or of one socket (see PARLEY_LIMIT_* in the configuration). */
export type TenantLimitName =
  | 'runs_per_minute'
  | 'user_runs_per_minute'
  | 'concurrent_runs'
  | 'user_concurrent_runs'
  | 'open_interactions'
  | 'sockets'
  | 'user_sockets'
  | 'messages_per_minute'
  | 'user_messages_per_minute'
  | 'socket_subscribes_per_minute';

/** Past one of those limits: 429 with `{ limit, retryAfterSecs }`; nothing was written. */
export class RateLimitedError extends ParleyError {
  constructor(
    readonly limit: TenantLimitName,
    readonly retryAfterSecs: number,
    message: string,
  ) {
    super('rate_limited', message, { limit, retryAfterSecs });
  }
}

/**
 * Redis, which every request needs, could not be reached in time: retry shortly. A write sent before
 * the connection dropped may still have been applied (retry a start or a message with its
 * Idempotency-Key; a repeated answer is told it was already given).
 */
export class StoreUnavailableError extends ParleyError {
  /** The `Retry-After` of a reply that may be sent again as it is. */
  static readonly RETRY_AFTER_SECS = 2;
  /** Refused before anything of the request was done: any request may be sent again as it is. */
  readonly notApplied: boolean;
  constructor(options?: { cause?: unknown; notApplied?: boolean }) {
    super('unavailable', 'the store (Redis) is unreachable; try again shortly', undefined, options);
    this.notApplied = options?.notApplied === true;
  }
}

/** Turns zod issues into `{ field, reason }` pairs, fields as dotted paths. */
export function toIssues(error: z.ZodError): ErrorIssue[] {
  return error.issues.flatMap((issue) => {
    const path = issue.path.map(String);
    // An unknown key is reported on its parent; name the key itself as the field.
    const fields = issue.code === 'unrecognized_keys' ? issue.keys.map((key) => [...path, key].join('.')) : [path.join('.')];
    return fields.map((field) => ({ field: field || '(root)', reason: issue.message }));
  });
}

/** Parses an answer body: any shape that does not fit is an invalid answer (422), not a malformed request. */
export function parseAnswerBody<T extends z.ZodType>(schema: T, value: unknown): z.infer<T> {
  const result = schema.safeParse(value);
  if (!result.success) {
    throw new InvalidAnswerError(toIssues(result.error));
  }
  return result.data;
}

/** Parses at the edge: returns the typed value or throws a ValidationFailedError naming the fields. */
export function parseOrThrow<T extends z.ZodType>(schema: T, value: unknown, where: string): z.infer<T> {
  const result = schema.safeParse(value);
  if (!result.success) {
    throw new ValidationFailedError(where, toIssues(result.error));
  }
  return result.data;
}
