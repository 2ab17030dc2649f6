import { randomUUID } from 'node:crypto';
import { StoredWebhookSchema, type CreateWebhookBody, type StoredWebhook, type Webhook } from '@parley/contracts';
import type { StoreContext } from '../store.context';
import { newWebhookSecret } from './webhook.signature';

/** Consumer group of the webhook dispatchers on every subscribed tenant's event stream. */
export const WEBHOOK_GROUP = 'webhooks';

/** How long the secret before a rotation still signs deliveries, so receivers can switch without losing any. */
export const ROTATION_GRACE_SECS = 24 * 3600;

export type CreateWebhookResult = { status: 'created'; webhook: StoredWebhook } | { status: 'limit'; count: number };

/** The API's view of an endpoint: everything but the secrets and the stream position. */
export function publicWebhook(stored: StoredWebhook): Webhook {
  const { id, url, events, description, enabled, createdAt, updatedAt, secretRotatedAt } = stored;
  return { id, url, events, ...(description ? { description } : {}), enabled, createdAt, updatedAt, ...(secretRotatedAt ? { secretRotatedAt } : {}) };
}

/** Secrets that sign besides the current one, at most, however often the secret is rotated in a grace period. */
export const MAX_PREVIOUS_SECRETS = 3;

/** The endpoint's previous secrets still in their grace period at `now`, newest first. */
export function previousSecrets(stored: StoredWebhook, now = new Date()): Array<{ secret: string; until: string }> {
  const legacy = stored.previousSecret && stored.previousSecretUntil ? [{ secret: stored.previousSecret, until: stored.previousSecretUntil }] : [];
  return [...(stored.previousSecrets ?? []), ...legacy].filter(({ until }) => Date.parse(until) > now.getTime());
}

/** The secrets a delivery is signed with at `now`: the current one, and the previous ones during their grace period. */
export function signingSecrets(stored: StoredWebhook, now = new Date()): string[] {
  return [stored.secret, ...previousSecrets(stored, now).map(({ secret }) => secret)];
}

/**
 * The endpoint signing with `secret` from `now` on. The secret it replaces signs too for `graceSecs`,
 * and so do those replaced before it whose grace is not over: a rotation asked again (its reply lost,
 * a double click) does not drop the secret receivers still check with.
 */
export function rotated(stored: StoredWebhook, secret: string, graceSecs: number, now = new Date()): StoredWebhook {
  const { previousSecret: _legacy, previousSecretUntil: _legacyUntil, ...rest } = stored;
  const replaced = { secret: stored.secret, until: new Date(now.getTime() + graceSecs * 1000).toISOString() };
  return {
    ...rest,
    secret,
    previousSecrets: [replaced, ...previousSecrets(stored, now)].slice(0, MAX_PREVIOUS_SECRETS),
    secretRotatedAt: now.toISOString(),
    updatedAt: now.toISOString(),
  };
}

/** A tenant's webhook endpoints, one hash per tenant (id → JSON). */
export class WebhookRepository {
  constructor(private readonly ctx: StoreContext) {}

  async create(tenant: string, body: CreateWebhookBody, maxEndpoints: number, now = new Date()): Promise<CreateWebhookResult> {
    const at = now.toISOString();
    const draft: Omit<StoredWebhook, 'createdSeq'> = {
      id: randomUUID(),
      tenant,
      url: body.url,
      events: body.events,
      ...(body.description ? { description: body.description } : {}),
      enabled: true,
      createdAt: at,
      updatedAt: at,
      secret: newWebhookSecret(),
    };
    const k = this.ctx.keys;
    const [status, value] = (await this.ctx.scripts.run(
      'webhookCreate',
      [k.webhooks(tenant), k.seq(tenant), k.tenantEvents(tenant)],
      [draft.id, JSON.stringify(draft), maxEndpoints, WEBHOOK_GROUP],
    )) as [string, number];
    return status === 'created' ? { status: 'created', webhook: { ...draft, createdSeq: Number(value) } } : { status: 'limit', count: Number(value) };
  }

  async list(tenant: string): Promise<StoredWebhook[]> {
    const all = await this.ctx.redis.hvals(this.ctx.keys.webhooks(tenant));
    return all
      .map((json) => parse(json))
      .filter((webhook): webhook is StoredWebhook => webhook !== null)
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  }

  async count(tenant: string): Promise<number> {
    return this.ctx.redis.hlen(this.ctx.keys.webhooks(tenant));
  }

  async get(tenant: string, id: string): Promise<StoredWebhook | null> {
    const json = await this.ctx.redis.hget(this.ctx.keys.webhooks(tenant), id);
    return json === null ? null : parse(json);
  }

  /**
   * Applies `change` to the endpoint as stored, atomically against concurrent writers (read, change,
   * compare-and-set, again if someone wrote meanwhile). Null when there is no such endpoint.
   */
  async update(tenant: string, id: string, change: (current: StoredWebhook) => StoredWebhook): Promise<StoredWebhook | null> {
    const key = this.ctx.keys.webhooks(tenant);
    for (let attempt = 0; attempt < 20; attempt++) {
      const raw = await this.ctx.redis.hget(key, id);
      const current = raw === null ? null : parse(raw);
      if (raw === null || current === null) {
        return null;
      }
      const next = StoredWebhookSchema.parse(change(current));
      // A new address, or an endpoint turned back on, is not held to the old one's failures.
      const fresh = next.url !== current.url || next.enabled !== current.enabled ? '1' : '';
      const result = await this.ctx.scripts.run('webhookSwap', [key, this.ctx.keys.webhookHealth(tenant, id)], [id, raw, JSON.stringify(next), fresh]);
      if (result === 'ok') {
        return next;
      }
      if (result === 'missing') {
        return null;
      }
    }
    throw new Error(`webhook ${id} kept changing`);
  }

  /** Deletes the endpoint and its delivery log; returns how many endpoints the tenant has left, or null if there was none. */
  async delete(tenant: string, id: string): Promise<number | null> {
    const k = this.ctx.keys;
    const left = Number(
      await this.ctx.scripts.run(
        'webhookDelete',
        [k.webhooks(tenant), k.webhookDeliveries(tenant, id), k.webhookInflight(tenant, id), k.webhookHealth(tenant, id), k.webhookWaiting(tenant, id)],
        [id, k.webhookDelivery(tenant, '')],
      ),
    );
    return left < 0 ? null : left;
  }
}

function parse(json: string): StoredWebhook | null {
  try {
    const result = StoredWebhookSchema.safeParse(JSON.parse(json));
    return result.success ? result.data : null;
  } catch {
    return null;
  }
}
