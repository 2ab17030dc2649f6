import { Module, type DynamicModule } from '@nestjs/common';
import type { ParleyConfig } from '@parley/platform';
import { ParleyStore, WebhookSlots, WebhookStoreModule } from '@parley/store';
import { WebhookDeliveryProcessor } from './webhook-delivery.processor';
import { WebhookDispatcher } from './webhook.dispatcher';
import { WebhookRouter } from './webhook.router';
import { WebhookSender } from './webhook.sender';

/** Outgoing webhooks: the dispatcher that turns tenant events into delivery jobs, and the worker that sends them. */
@Module({})
export class WebhooksModule {
  static forRoot(config: ParleyConfig): DynamicModule {
    return {
      module: WebhooksModule,
      imports: [WebhookStoreModule.forRoot(config)],
      providers: [
        { provide: WebhookSender, useFactory: () => new WebhookSender({ timeoutMs: config.webhookTimeoutMs, allowPrivate: config.webhookAllowPrivate }) },
        {
          provide: WebhookSlots,
          inject: [ParleyStore],
          useFactory: (store: ParleyStore) =>
            new WebhookSlots(store.ctx, {
              inFlight: config.webhookEndpointConcurrency,
              tenantInFlight: config.webhookTenantConcurrency,
              failuresToPause: config.webhookPauseAfter,
              pauseMs: config.webhookPauseMs,
              longestPauseMs: config.webhookPauseMs * 32,
              slotLapseMs: config.webhookTimeoutMs + 5_000,
            }),
        },
        WebhookRouter,
        WebhookDispatcher,
        WebhookDeliveryProcessor,
      ],
      exports: [WebhookDeliveryProcessor, WebhookStoreModule],
    };
  }
}
