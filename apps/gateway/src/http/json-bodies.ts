import type { NextFunction, Request, Response } from 'express';
import { ParleyError } from '@parley/contracts';

/** The media types the JSON body parser reads (and the only ones a body may have). */
export const JSON_MEDIA_TYPES = ['application/json', 'application/*+json'];

const METHODS_WITH_BODIES = new Set(['POST', 'PUT', 'PATCH']);

/**
 * Express middleware, before the JSON parser: a POST, PUT or PATCH whose body is not declared as
 * JSON is a 415. The parser would skip such a body, and the route would see none at all: a valid
 * JSON body sent as text/plain would be refused as a missing one, naming the wrong cause.
 */
export function rejectNonJsonBodies(req: Request, _res: Response, next: NextFunction): void {
  next(METHODS_WITH_BODIES.has(req.method) && carriesBody(req) && !req.is(JSON_MEDIA_TYPES) ? notJsonError(req.headers['content-type']) : undefined);
}

/**
 * An empty body (Content-Length: 0, as fetch sends for a POST without one) is no body. A chunked one
 * counts only with a Content-Type: streaming clients send a POST without a body as an empty chunked
 * one, and which it is shows only once it is read (a chunked body with none is left to the route).
 */
function carriesBody(req: Request): boolean {
  return Number(req.headers['content-length'] ?? 0) > 0 || (req.headers['transfer-encoding'] !== undefined && req.headers['content-type'] !== undefined);
}

/** Enough of a refused Content-Type to recognise it; a header may be kilobytes long. */
const SHOWN_CHARS = 100;

function notJsonError(contentType: string | undefined): ParleyError {
  const given = contentType === undefined ? 'no Content-Type header' : `Content-Type header ${JSON.stringify(contentType.slice(0, SHOWN_CHARS))}`;
  return new ParleyError('unsupported_media_type', `a request body must be JSON (Content-Type: application/json); got ${given}`);
}
