import { Inject, Injectable, SetMetadata, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { StoreUnavailableError } from '@parley/contracts';
import type { RedisClient } from '@parley/platform';
import { REDIS, settlesWithin } from '@parley/store';

/** How long a request waits for Redis to come back (a restart, a failover) before it is answered 503. */
export const STORE_WAIT_MS = 2000;

const ANSWERS_WITHOUT_STORE = 'parley:answersWithoutStore';

/** For routes that answer while Redis is away (health), which this guard lets through at once. */
export const AnswersWithoutStore = (): ClassDecorator & MethodDecorator => SetMetadata(ANSWERS_WITHOUT_STORE, true);

/**
 * Before anything of a request is read or done: while the store's connection is down, the request
 * waits for it up to {@link STORE_WAIT_MS}, then is answered 503 `unavailable`, nothing applied
 * (socket.io messages wait the same way: EventsGateway).
 * Without it a request would queue behind the reconnection: on a single Redis until its retries
 * ran out (seconds), on a Redis Cluster for as long as the outage lasts.
 */
@Injectable()
export class StoreReadyGuard implements CanActivate {
  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    private readonly reflector: Reflector,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http' || this.redis.status === 'ready') {
      return true;
    }
    if (this.reflector.getAllAndOverride<boolean>(ANSWERS_WITHOUT_STORE, [context.getHandler(), context.getClass()])) {
      return true;
    }
    await storeReady(this.redis);
    return true;
  }
}

/** Resolves once `redis` is ready (at once when it is); refuses with a 503 that applied nothing after {@link STORE_WAIT_MS}. */
export async function storeReady(redis: RedisClient): Promise<void> {
  if (redis.status !== 'ready' && !(await ready(redis, STORE_WAIT_MS))) {
    throw new StoreUnavailableError({ notApplied: true });
  }
}

/** One listener per connection, however many requests wait for it (Node warns past ten). */
const comingBack = new WeakMap<RedisClient, Promise<void>>();

function back(redis: RedisClient): Promise<void> {
  let promise = comingBack.get(redis);
  if (!promise) {
    promise = new Promise<void>((resolve) => redis.once('ready', () => resolve()));
    comingBack.set(redis, promise);
    void promise.then(() => comingBack.delete(redis));
  }
  return promise;
}

async function ready(redis: RedisClient, withinMs: number): Promise<boolean> {
  await settlesWithin(back(redis), withinMs);
  return redis.status === 'ready';
}
