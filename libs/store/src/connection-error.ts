import { isNotConnectionError } from 'bullmq';
import { mayHaveRun } from '@parley/platform';

/** Socket errors of a connection to Redis that is down or going away. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/** ioredis' own words for a command it could not send or whose connection closed under it. */
const CLIENT_MESSAGES = /^(Connection is closed\.|Stream isn't writeable|Reached the max retries per request limit)/;

/**
 * True for an error that says only that Redis is away: the connection refused, reset or closed,
 * ioredis' retries spent, or a reply lost or overdue (mayHaveRun). A request gets 503 for it; a
 * BullMQ worker reports one for each command it fails during an outage, which the connection
 * already logs (at warn, then every 10 s: createRedis).
 */
export function isRedisAway(error: unknown): boolean {
  // Not `instanceof Error`: a socket's errors may come from another realm (a test's, say).
  if (typeof (error as Error | null)?.message !== 'string') {
    return false;
  }
  const { code, message } = error as Error & { code?: unknown };
  return mayHaveRun(error) || !isNotConnectionError(error as Error) || (typeof code === 'string' && SOCKET_CODES.has(code)) || CLIENT_MESSAGES.test(message);
}
