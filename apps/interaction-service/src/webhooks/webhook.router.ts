import { Injectable, Logger } from '@nestjs/common';
import { WEBHOOK_EVENT_TYPES, webhookEventId, type ParleyEvent, type StoredWebhook, type WebhookEventType, type WebhookPayload } from '@parley/contracts';
import { metrics } from '@parley/platform';
import { WebhookQueue, WebhookStore, deliveryIdFor } from '@parley/store';

const SUBSCRIBABLE = new Set<string>(WEBHOOK_EVENT_TYPES);

/** The endpoints an event goes to: enabled, subscribed to its type, and created before it happened. */
export function endpointsFor(event: ParleyEvent, endpoints: StoredWebhook[]): StoredWebhook[] {
  if (!SUBSCRIBABLE.has(event.type)) {
    return [];
  }
  return endpoints.filter((endpoint) => endpoint.enabled && endpoint.events.includes(event.type as WebhookEventType) && event.seq > endpoint.createdSeq);
}

/** The body a receiver gets. */
export function payloadOf(event: ParleyEvent): WebhookPayload {
  return {
    id: webhookEventId(event.tenant, event.seq),
    type: event.type as WebhookEventType,
    tenant: event.tenant,
    seq: event.seq,
    runId: event.runId,
    owner: event.owner,
    at: event.at,
    data: event.data,
  };
}

/** Turns one event of a subscribed tenant into delivery records and queued delivery jobs. */
@Injectable()
export class WebhookRouter {
  private readonly logger = new Logger(WebhookRouter.name);

  constructor(
    private readonly webhooks: WebhookStore,
    private readonly queue: WebhookQueue,
  ) {}

  /**
   * Idempotent: a stream entry read again (a dispatcher died before its XACK) finds its deliveries
   * recorded and queues only those still pending, under the same job ids.
   */
  async route(event: ParleyEvent, endpoints: StoredWebhook[]): Promise<number> {
    const targets = endpointsFor(event, endpoints);
    if (targets.length === 0) {
      return 0;
    }
    const payload = payloadOf(event);
    const body = JSON.stringify(payload);
    let queued = 0;
    for (const endpoint of targets) {
      const deliveryId = deliveryIdFor(event.tenant, endpoint.id, event.seq);
      const created = await this.webhooks.deliveries.create(event.tenant, {
        deliveryId,
        webhookId: endpoint.id,
        eventId: payload.id,
        eventType: payload.type,
        seq: event.seq,
        runId: event.runId,
        payload: body,
      });
      if (created.status === 'created' && created.givenUp > 0) {
        metrics.webhookDeliveriesGivenUp.inc(created.givenUp);
        this.logger.warn(`webhook ${endpoint.id} of ${event.tenant}: ${created.givenUp} older deliveries still being retried were given up (recorded as failed) to keep its log's size`);
      }
      if (created.status === 'created' || (created.status === 'exists' && created.current === 'pending')) {
        await this.queue.enqueue({ tenant: event.tenant, webhookId: endpoint.id, deliveryId });
        queued++;
      }
    }
    return queued;
  }
}
