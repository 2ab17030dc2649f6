import { isNotConnectionError } from 'bullmq';

/** Socket errors of a connection to Redis that is down or going away. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/** ioredis' own words for a command it could not send or whose connection closed under it. */
const CLIENT_MESSAGES = /^(Connection is closed\.|Stream isn't writeable|Reached the max retries per request limit)/;

/**
 * True for an error that only says Redis is away (refused, reset, closed): what a BullMQ worker
 * reports for each command it fails during an outage, which the connection already logs (at warn,
 * then every 10 s: createRedis).
 */
export function isConnectionError(error: Error): boolean {
  const code = (error as { code?: unknown }).code;
  return !isNotConnectionError(error) || (typeof code === 'string' && SOCKET_CODES.has(code)) || CLIENT_MESSAGES.test(error.message);
}
