import { isNotConnectionError } from 'bullmq';
import { isNotPrimaryReply, mayHaveRun } from '@parley/platform';

/** Socket errors of a connection to Redis that is down or going away. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/** ioredis' own words for a command it could not send or whose connection closed under it. */
const CLIENT_MESSAGES = /^(Connection is closed\.|Stream isn't writeable|Reached the max retries per request limit)/;
/**
 * A Redis Cluster's words while a node fails over or a slot moves: the cluster is down, a
 * multi-key command waits for its slot to finish moving, a redirection reached the caller, or
 * ioredis gave up following them. Each passes once the cluster has settled.
 */
const CLUSTER_MESSAGES =
  /^(CLUSTERDOWN |TRYAGAIN |MOVED \d+ |ASK \d+ |Too many Cluster redirections|Failed to refresh slots cache|All keys in the pipeline should belong to the same slots allocation group)/;

/**
 * True for an error that says only that Redis is away: the connection refused, reset or closed,
 * ioredis' retries spent, a reply lost or overdue (mayHaveRun), a failover (isNotPrimaryReply), or a
 * Redis Cluster failing over or moving a slot (CLUSTER_MESSAGES). A request gets 503 for it; a
 * BullMQ worker reports one for each command it fails during an outage, which the connection
 * already logs (at warn, then every 10 s: createRedis).
 */
export function isRedisAway(error: unknown): boolean {
  // Not `instanceof Error`: a socket's errors may come from another realm (a test's, say).
  if (typeof (error as Error | null)?.message !== 'string') {
    return false;
  }
  const { code, message } = error as Error & { code?: unknown };
  return mayHaveRun(error) || !isNotConnectionError(error as Error) || (typeof code === 'string' && SOCKET_CODES.has(code)) || CLIENT_MESSAGES.test(message) || CLUSTER_MESSAGES.test(message) || isNotPrimaryReply(error as Error);
}
