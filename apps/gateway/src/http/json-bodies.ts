import type { NextFunction, Request, Response } from 'express';
import { ParleyError } from '@parley/contracts';

/** The media types the JSON body parser reads (and the only ones a body may have). */
const JSON_MEDIA_TYPES = ['application/json', 'application/*+json'];

/**
 * Whether the JSON body parser reads a request's body: one declared as JSON, and a chunked one that
 * declares no type. Which of those is empty (a streaming client's POST without a body) shows only
 * once it is read: empty, it is no body; with content, it must be JSON (else a 400 naming the JSON).
 */
export function readsAsJson(req: Request): boolean {
  return Boolean(req.is(JSON_MEDIA_TYPES)) || isUntypedChunked(req);
}

function isUntypedChunked(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined && req.headers['content-type'] === undefined;
}

const METHODS_WITH_BODIES = new Set(['POST', 'PUT', 'PATCH']);

/**
 * Express middleware, before the JSON parser: a POST, PUT or PATCH whose body is not declared as
 * JSON is a 415. The parser would skip such a body, and the route would see none at all: a valid
 * JSON body sent as text/plain would be refused as a missing one, naming the wrong cause.
 */
export function rejectNonJsonBodies(req: Request, _res: Response, next: NextFunction): void {
  next(METHODS_WITH_BODIES.has(req.method) && carriesBody(req) && !readsAsJson(req) ? notJsonError(req.headers['content-type']) : undefined);
}

/** An empty body (Content-Length: 0, as fetch sends for a POST without one) is no body. */
function carriesBody(req: Request): boolean {
  return Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
}

/** Enough of a refused Content-Type to recognise it; a header may be kilobytes long. */
const SHOWN_CHARS = 100;

function notJsonError(contentType: string | undefined): ParleyError {
  const given = contentType === undefined ? 'no Content-Type header' : `Content-Type header ${JSON.stringify(contentType.slice(0, SHOWN_CHARS))}`;
  return new ParleyError('unsupported_media_type', `a request body must be JSON (Content-Type: application/json); got ${given}`);
}
