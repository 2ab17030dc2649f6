import { z } from 'zod';
import { ErrorCodeSchema, ParleyError, type ErrorBody } from '@parley/contracts';

/** Codes the CLI adds for failures that never produced an error body. */
export type ClientErrorCode = 'network_error' | 'http_error' | 'bad_response';

/** A failed call to the gateway, over HTTP or as a socket.io ack. */
export class ApiError extends Error {
  constructor(
    /** HTTP status; 0 when the gateway was not reached. */
    readonly status: number,
    readonly code: ErrorBody['error']['code'] | ClientErrorCode,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  /** Socket acks carry no HTTP status; the code implies the one the HTTP API would have used. */
  static fromBody(body: ErrorBody, status?: number): ApiError {
    const { code, message, details } = body.error;
    return new ApiError(status ?? new ParleyError(code, message).status, code, message, details);
  }
}

/**
 * An error body as a gateway sends it, read leniently: a code this CLI does not know (a newer
 * gateway's) is taken as `internal`, a fault on the gateway's side, with the gateway's message, rather
 * than as a reply that is not an error at all.
 */
export const ReceivedErrorBodySchema = z
  .object({ error: z.object({ code: z.string(), message: z.string(), details: z.unknown().optional() }) })
  .transform(({ error }): ErrorBody => ({ error: { ...error, code: ErrorCodeSchema.safeParse(error.code).data ?? 'internal' } }));
