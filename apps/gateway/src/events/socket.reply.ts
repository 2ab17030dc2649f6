import type { Logger } from '@nestjs/common';
import { StoreUnavailableError, type ErrorBody } from '@parley/contracts';
import type { RedisClient } from '@parley/platform';
import { MAYBE_APPLIED, toErrorReply } from '../http/error.filter';
import { storeReady } from '../http/store-ready.guard';

/** A socket.io acknowledgement: the result, or the error body an HTTP request would get. */
export type Ack<T> = ({ ok: true } & T) | ErrorBody;

/**
 * Runs a client message's work and acknowledges it. While Redis is away the work waits for it as an
 * HTTP request does (StoreReadyGuard), then is refused `unavailable`, nothing done. `kind`: a write
 * that Redis went away during is said to have maybe been applied; a read is not.
 */
export async function socketReply<T extends object>(redis: RedisClient, logger: Logger, what: string, work: () => Promise<T>, kind: 'read' | 'write' = 'write'): Promise<Ack<T>> {
  try {
    await storeReady(redis);
    return { ok: true, ...(await work()) };
  } catch (error) {
    const reply = toErrorReply(error);
    if (reply.status >= 500 && reply.body.error.code !== 'unavailable') {
      logger.error(`${what} failed: ${(error as Error).message}`);
    }
    // As over HTTP: a write that Redis went away during may have been applied.
    if (reply.body.error.code === 'unavailable' && kind === 'write' && !(error instanceof StoreUnavailableError && error.notApplied)) {
      reply.body.error.message = MAYBE_APPLIED;
    }
    return reply.body;
  }
}
