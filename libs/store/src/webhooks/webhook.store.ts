import type { StoreContext } from '../store.context';
import { WebhookDeliveryRepository } from './webhook-delivery.repository';
import { WebhookRepository } from './webhook.repository';
import { WebhookScripts } from './webhook.scripts';
import { WebhookSubscriptions } from './webhook-subscriptions';

/** Everything webhooks keep in Redis: endpoints, delivery logs, and which tenants are read. */
export class WebhookStore {
  readonly endpoints: WebhookRepository;
  readonly deliveries: WebhookDeliveryRepository;
  readonly subscriptions: WebhookSubscriptions;

  constructor(ctx: StoreContext) {
    const scripts = new WebhookScripts(ctx.redis);
    this.endpoints = new WebhookRepository(ctx, scripts);
    this.deliveries = new WebhookDeliveryRepository(ctx, scripts);
    this.subscriptions = new WebhookSubscriptions(ctx);
  }
}
