import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import {
  ConflictError,
  NotFoundError,
  ValidationFailedError,
  WebhookEventTypeSchema,
  type CreateWebhookBody,
  type TokenClaims,
  type StoredWebhook,
  type UpdateWebhookBody,
  type Webhook,
  type WebhookDelivery,
} from '@parley/contracts';
import type { ParleyConfig } from '@parley/platform';
import {
  PARLEY_CONFIG,
  ROTATION_GRACE_SECS,
  WebhookQueue,
  WebhookStore,
  newWebhookSecret,
  publicWebhook,
  rotated,
  webhookTargetProblem,
} from '@parley/store';

/** A tenant's webhook endpoints and their delivery logs; admins only. */
@Injectable()
export class WebhooksService {
  constructor(
    @Inject(PARLEY_CONFIG) private readonly config: ParleyConfig,
    private readonly webhooks: WebhookStore,
    private readonly queue: WebhookQueue,
  ) {}

  /** Checked before anything else, so a member gets the same answer for any id. */
  async create(user: TokenClaims, body: CreateWebhookBody): Promise<{ webhook: Webhook; secret: string }> {
    await this.checkTarget(body.url);
    const result = await this.webhooks.endpoints.create(user.tenant, body, this.config.webhookMaxEndpoints);
    if (result.status === 'limit') {
      throw new ConflictError(`the tenant already has ${result.count} webhook endpoints, the most allowed (${this.config.webhookMaxEndpoints}); delete one first`, {
        limit: 'webhook_endpoints',
        max: this.config.webhookMaxEndpoints,
      });
    }
    await this.webhooks.subscriptions.announce(user.tenant);
    return { webhook: publicWebhook(result.webhook), secret: result.webhook.secret };
  }

  async list(user: TokenClaims): Promise<Webhook[]> {
    return (await this.webhooks.endpoints.list(user.tenant)).map(publicWebhook);
  }

  async get(user: TokenClaims, id: string): Promise<Webhook> {
    return publicWebhook(await this.stored(user, id));
  }

  async update(user: TokenClaims, id: string, body: UpdateWebhookBody): Promise<Webhook> {
    if (body.url !== undefined) {
      await this.checkTarget(body.url);
    }
    const at = new Date().toISOString();
    const updated = await this.webhooks.endpoints.update(user.tenant, id, (current) => {
      const { description, ...rest } = current;
      const kept = body.description === undefined ? description : body.description;
      return {
        ...rest,
        ...(kept ? { description: kept } : {}),
        url: body.url ?? current.url,
        events: body.events ?? current.events,
        enabled: body.enabled ?? current.enabled,
        updatedAt: at,
      };
    });
    if (!updated) {
      throw new NotFoundError('webhook', id);
    }
    await this.webhooks.subscriptions.announce(user.tenant);
    return publicWebhook(updated);
  }

  async remove(user: TokenClaims, id: string): Promise<Webhook> {
    const webhook = await this.stored(user, id);
    if ((await this.webhooks.endpoints.delete(user.tenant, id)) === null) {
      throw new NotFoundError('webhook', id);
    }
    return publicWebhook(webhook);
  }

  /** A new secret signs from now on; the ones it replaces sign too for ROTATION_GRACE_SECS (see {@link rotated}). */
  async rotateSecret(user: TokenClaims, id: string): Promise<{ webhook: Webhook; secret: string }> {
    const secret = newWebhookSecret();
    const updated = await this.webhooks.endpoints.update(user.tenant, id, (current) => rotated(current, secret, ROTATION_GRACE_SECS));
    if (!updated) {
      throw new NotFoundError('webhook', id);
    }
    return { webhook: publicWebhook(updated), secret };
  }

  async deliveries(user: TokenClaims, id: string, limit: number): Promise<WebhookDelivery[]> {
    await this.stored(user, id);
    return this.webhooks.deliveries.list(user.tenant, id, limit);
  }

  async delivery(user: TokenClaims, deliveryId: string): Promise<WebhookDelivery> {
    const record = await this.webhooks.deliveries.get(user.tenant, deliveryId);
    if (!record) {
      throw new NotFoundError('webhook delivery', deliveryId);
    }
    return record.delivery;
  }

  /** Sends the same event again (same event id and body) as a new delivery, with a fresh signature. */
  async replay(user: TokenClaims, deliveryId: string): Promise<WebhookDelivery> {
    const record = await this.webhooks.deliveries.get(user.tenant, deliveryId);
    if (!record) {
      throw new NotFoundError('webhook delivery', deliveryId);
    }
    const { delivery } = record;
    const endpoint = await this.webhooks.endpoints.get(user.tenant, delivery.webhookId);
    if (!endpoint) {
      throw new NotFoundError('webhook delivery', deliveryId);
    }
    if (!endpoint.enabled) {
      throw new ConflictError(`webhook ${endpoint.id} is disabled; enable it to replay deliveries`);
    }
    const replayId = randomUUID();
    const created = await this.webhooks.deliveries.create(user.tenant, {
      deliveryId: replayId,
      webhookId: endpoint.id,
      eventId: delivery.eventId,
      eventType: WebhookEventTypeSchema.parse(delivery.eventType),
      seq: delivery.seq,
      runId: delivery.runId,
      payload: record.payload,
      replayOf: delivery.id,
    });
    if (created.status !== 'created') {
      throw new NotFoundError('webhook delivery', deliveryId);
    }
    await this.queue.enqueue({ tenant: user.tenant, webhookId: endpoint.id, deliveryId: replayId });
    return this.delivery(user, replayId);
  }

  private async stored(user: TokenClaims, id: string): Promise<StoredWebhook> {
    const webhook = await this.webhooks.endpoints.get(user.tenant, id);
    if (!webhook) {
      throw new NotFoundError('webhook', id);
    }
    return webhook;
  }

  private async checkTarget(url: string): Promise<void> {
    const problem = await webhookTargetProblem(url, this.config.webhookAllowPrivate);
    if (problem) {
      throw new ValidationFailedError('body', [{ field: 'url', reason: problem }]);
    }
  }
}
