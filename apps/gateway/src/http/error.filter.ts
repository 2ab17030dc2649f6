import { Catch, HttpException, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ParleyError, RateLimitedError, StoreUnavailableError, type ErrorBody, type ErrorCode } from '@parley/contracts';
import { isRedisAway } from '@parley/store';

/** Every error leaves as `{ error: { code, message, details? } }` with its HTTP status. */
@Catch()
export class ErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger(ErrorFilter.name);

  catch(exception: unknown, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<Response>();
    const request = host.switchToHttp().getRequest<Request>();
    const { status, body } = toErrorReply(exception);
    if (body.error.code === 'unavailable') {
      this.logger.warn(`answered 503: Redis unreachable (${exception instanceof Error ? exception.message : String(exception)})`);
      const notApplied = exception instanceof StoreUnavailableError && exception.notApplied;
      if (notApplied || READS.has(request.method) || request.headers['idempotency-key'] !== undefined) {
        response.setHeader('Retry-After', String(StoreUnavailableError.RETRY_AFTER_SECS));
      } else {
        // A write may have gone through before Redis went away: no invitation to send it blindly again.
        body.error.message = MAYBE_APPLIED;
      }
    } else if (status >= 500) {
      this.logger.error(exception instanceof Error ? (exception.stack ?? exception.message) : String(exception));
    }
    if (exception instanceof RateLimitedError) {
      response.setHeader('Retry-After', String(exception.retryAfterSecs));
    }
    response.status(status).json(body);
  }
}

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);
export const MAYBE_APPLIED =
  'the store (Redis) became unreachable during the request, which may have been applied: look before sending it again (a start or a message sent with an Idempotency-Key can simply be sent again)';

const HTTP_CODES: Record<number, ErrorCode> = {
  400: 'bad_request',
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'invalid_answer',
  429: 'rate_limited',
  503: 'unavailable',
};

export function toErrorReply(exception: unknown): { status: number; body: ErrorBody } {
  if (exception instanceof ParleyError) {
    return { status: exception.status, body: exception.toBody() };
  }
  if (isRedisAway(exception)) {
    const unavailable = new StoreUnavailableError({ cause: exception });
    return { status: unavailable.status, body: unavailable.toBody() };
  }
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    return { status, body: { error: { code: HTTP_CODES[status] ?? (status >= 500 ? 'internal' : 'bad_request'), message: exception.message } } };
  }
  // body-parser errors carry an HTTP status and a type.
  const parserError = exception as { status?: number; type?: string; message?: string; body?: unknown; code?: string };
  if (parserError.type === 'entity.too.large') {
    return { status: 413, body: { error: { code: 'payload_too_large', message: 'request body is too large' } } };
  }
  // A JSON body in a charset or content encoding the parser does not read.
  if (parserError.status === 415) {
    const header = parserError.type === 'charset.unsupported' ? 'Content-Type' : 'Content-Encoding';
    return { status: 415, body: { error: { code: 'unsupported_media_type', message: `${parserError.message ?? 'unsupported media type'} (${header} header)` } } };
  }
  if (typeof parserError.status === 'number' && parserError.status >= 400 && parserError.status < 500) {
    return { status: 400, body: { error: { code: 'bad_request', message: parserMessage(parserError) } } };
  }
  return { status: 500, body: { error: { code: 'internal', message: 'internal error' } } };
}

function parserMessage(error: { type?: string; message?: string; body?: unknown; code?: string }): string {
  if (error.type === 'entity.parse.failed') {
    return isBareJsonValue(error.body) ? 'the JSON body must be an object or an array, not a bare value' : `malformed JSON body: ${error.message ?? ''}`;
  }
  // zlib's codes: a body that is not what its Content-Encoding names.
  if (error.code?.startsWith('Z_')) {
    return `the body could not be decoded as its Content-Encoding header says: ${error.message ?? error.code}`;
  }
  return error.message ?? 'bad request';
}

/** Valid JSON, but not an object or an array (the parser takes those only). */
function isBareJsonValue(body: unknown): boolean {
  if (typeof body !== 'string') {
    return false;
  }
  try {
    JSON.parse(body);
    return true;
  } catch {
    return false;
  }
}
