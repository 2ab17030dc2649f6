import { Inject, Logger, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import type { ParleyConfig, RedisClient } from '@parley/platform';
import { ParleyStore } from '../store';
import { closeBoundOver, settlesWithin } from '../queue.worker';
import { QUEUE_REDIS } from '../store.module';
import { WebhookQueue } from './webhook.queue';
import { WebhookStore } from './webhook.store';

/** Gives an app the webhook store and the delivery queue (over StoreModule's clients) and closes the queue. */
@Module({})
export class WebhookStoreModule implements OnApplicationShutdown {
  constructor(
    private readonly queue: WebhookQueue,
    @Inject(QUEUE_REDIS) private readonly queueRedis: RedisClient,
  ) {}

  static forRoot(config: ParleyConfig): DynamicModule {
    return {
      module: WebhookStoreModule,
      providers: [
        { provide: WebhookStore, inject: [ParleyStore], useFactory: (store: ParleyStore) => new WebhookStore(store.ctx) },
        {
          provide: WebhookQueue,
          inject: [QUEUE_REDIS, ParleyStore],
          useFactory: (redis: RedisClient, store: ParleyStore) =>
            new WebhookQueue(redis, store.ctx.keys.bullPrefix(), { attempts: config.webhookAttempts, backoffMs: config.webhookBackoffMs }),
        },
      ],
      exports: [WebhookStore, WebhookQueue],
    };
  }

  async onApplicationShutdown(): Promise<void> {
    const closing = this.queue.close().catch((error: unknown) => new Logger('WebhookStoreModule').warn(`closing the webhook queue: ${String(error)}`));
    if (!(await settlesWithin(closing, closeBoundOver(this.queueRedis)))) {
      new Logger('WebhookStoreModule').warn('the webhook queue did not close in time');
    }
  }
}
