import { Global, Inject, Logger, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { Redis } from 'ioredis';
import { createRedis, type ParleyConfig, type RedisClient } from '@parley/platform';
import { closeBoundOver, settlesWithin } from './queue.worker';
import { ParleyQueues } from './queues';
import { ParleyStore } from './store';
import { RunControl } from './run.control';

export const PARLEY_CONFIG = Symbol('PARLEY_CONFIG');
export const REDIS = Symbol('REDIS');
export const QUEUE_REDIS = Symbol('QUEUE_REDIS');

/** Provides the config, one Redis client, the store and the queues to an app; closes them last. */
@Global()
@Module({})
export class StoreModule implements OnApplicationShutdown {
  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(QUEUE_REDIS) private readonly queueRedis: RedisClient,
    private readonly queues: ParleyQueues,
  ) {}

  /**
   * `commandTimeoutMs`: a command unanswered that long fails (ioredis' `commandTimeout`), for an app
   * that answers requests and must not hang with a Redis that stopped answering over a live
   * connection. Not for workers: their steps are bounded by leases, and BullMQ's blocking reads wait by design.
   */
  static forRoot(config: ParleyConfig, { commandTimeoutMs }: { commandTimeoutMs?: number } = {}): DynamicModule {
    const bounded = commandTimeoutMs === undefined ? {} : { commandTimeout: commandTimeoutMs };
    return {
      module: StoreModule,
      providers: [
        { provide: PARLEY_CONFIG, useValue: config },
        { provide: REDIS, useFactory: () => createRedis(config, 'command', { ...bounded, purpose: 'store' }) },
        // The gateway's queue connection only adds jobs (no blocking read): bounded the same way.
        { provide: QUEUE_REDIS, useFactory: () => createRedis(config, 'blocking', { ...bounded, purpose: 'queues' }) },
        {
          provide: ParleyStore,
          inject: [REDIS],
          useFactory: (redis: RedisClient) =>
            new ParleyStore(redis, {
              prefix: config.prefix,
              eventsMaxLen: config.eventsMaxLen,
              retentionSecs: config.retentionSecs,
              leaseMs: config.leaseMs,
              cluster: Boolean(config.redisClusterNodes?.length),
            }),
        },
        {
          provide: ParleyQueues,
          inject: [QUEUE_REDIS, ParleyStore],
          useFactory: (redis: RedisClient, store: ParleyStore) =>
            new ParleyQueues(redis, store.ctx.keys.bullPrefix(), store.ctx.redis instanceof Redis ? store.ctx.redis : undefined),
        },
        { provide: RunControl, inject: [ParleyStore, ParleyQueues], useFactory: (store: ParleyStore, queues: ParleyQueues) => new RunControl(store, queues) },
      ],
      exports: [PARLEY_CONFIG, REDIS, QUEUE_REDIS, ParleyStore, ParleyQueues, RunControl],
    };
  }

  /** Bounded, like the workers' close (see CLOSE_BOUND_MS); not waited for while Redis is away. */
  async onApplicationShutdown(): Promise<void> {
    if (!(await settlesWithin(this.queues.close(), closeBoundOver(this.queueRedis)))) {
      new Logger('StoreModule').warn('the queues did not close in time');
    }
    if (!(await settlesWithin(Promise.allSettled([this.redis.quit(), this.queueRedis.quit()]), Math.min(closeBoundOver(this.redis), closeBoundOver(this.queueRedis))))) {
      this.redis.disconnect();
      this.queueRedis.disconnect();
    }
  }
}
