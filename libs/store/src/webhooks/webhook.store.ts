import type { StoreContext } from '../store.context';
import { WebhookDeliveryRepository } from './webhook-delivery.repository';
import { WebhookRepository } from './webhook.repository';
import { WebhookSubscriptions } from './webhook-subscriptions';

/** Everything webhooks keep in Redis: endpoints, delivery logs, and which tenants are read. */
export class WebhookStore {
  readonly endpoints: WebhookRepository;
  readonly deliveries: WebhookDeliveryRepository;
  readonly subscriptions: WebhookSubscriptions;

  constructor(ctx: StoreContext) {
    this.endpoints = new WebhookRepository(ctx);
    this.deliveries = new WebhookDeliveryRepository(ctx);
    this.subscriptions = new WebhookSubscriptions(ctx);
  }
}
