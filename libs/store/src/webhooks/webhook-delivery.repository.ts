import { createHash } from 'node:crypto';
import {
  DeliveryAttemptSchema,
  WEBHOOK_LIMITS,
  WebhookDeliverySchema,
  type DeliveryAttempt,
  type DeliveryStatus,
  type WebhookDelivery,
  type WebhookEventType,
} from '@parley/contracts';
import type { StoreContext } from '../store.context';

/** The delivery id of an event's first delivery to an endpoint: the same on every redelivery of the stream entry. */
export function deliveryIdFor(tenant: string, webhookId: string, seq: number): string {
  return `d${createHash('sha256').update(`${tenant}|${webhookId}|${seq}`).digest('hex').slice(0, 32)}`;
}

export interface NewDelivery {
  deliveryId: string;
  webhookId: string;
  eventId: string;
  eventType: WebhookEventType;
  seq: number;
  runId: string;
  /** The exact JSON body to send; replays send it again unchanged. */
  payload: string;
  replayOf?: string;
}

/** `givenUp`: older deliveries still pending that left the log to make room, recorded as failed. */
export type CreateDeliveryResult = { status: 'created'; givenUp: number } | { status: 'exists'; current: DeliveryStatus } | { status: 'missing' };

export interface AttemptOutcome {
  /** Absent when no request was made (the endpoint was deleted or disabled meanwhile). */
  attempt?: DeliveryAttempt;
  status: DeliveryStatus;
  lastStatus?: number;
  lastError?: string;
}

/** Each endpoint's delivery log: one record per delivery, the newest WEBHOOK_LIMITS.deliveriesPerEndpoint kept. */
export class WebhookDeliveryRepository {
  constructor(private readonly ctx: StoreContext) {}

  async create(tenant: string, delivery: NewDelivery, now = new Date()): Promise<CreateDeliveryResult> {
    const k = this.ctx.keys;
    const [status, current] = (await this.ctx.scripts.run(
      'webhookCreateDelivery',
      [k.webhookDelivery(tenant, delivery.deliveryId), k.webhookDeliveries(tenant, delivery.webhookId), k.webhooks(tenant)],
      [
        delivery.deliveryId,
        delivery.webhookId,
        delivery.eventId,
        delivery.eventType,
        delivery.seq,
        delivery.runId,
        delivery.payload,
        now.toISOString(),
        now.getTime(),
        WEBHOOK_LIMITS.deliveriesPerEndpoint,
        k.webhookDelivery(tenant, ''),
        delivery.replayOf ?? '',
        this.ctx.options.retentionSecs,
      ],
    )) as [string, (string | number)?];
    switch (status) {
      case 'exists':
        return { status: 'exists', current: current as DeliveryStatus };
      case 'created':
        return { status: 'created', givenUp: Number(current ?? 0) };
      default:
        return { status: 'missing' };
    }
  }

  /** Returns the attempt count, or null when the record is gone or no longer pending (then nothing is written). */
  async record(tenant: string, deliveryId: string, outcome: AttemptOutcome, now = new Date()): Promise<number | null> {
    const k = this.ctx.keys;
    const result = Number(
      await this.ctx.scripts.run(
        'webhookRecordAttempt',
        [k.webhookDelivery(tenant, deliveryId), k.webhookDeliveryAttempts(tenant, deliveryId)],
        [
          outcome.attempt ? JSON.stringify(outcome.attempt) : '',
          outcome.status,
          outcome.lastStatus ?? '',
          outcome.lastError ?? '',
          now.toISOString(),
          WEBHOOK_LIMITS.attemptsPerDelivery,
          this.ctx.options.retentionSecs,
        ],
      ),
    );
    return result < 0 ? null : result;
  }

  async get(tenant: string, deliveryId: string): Promise<{ delivery: WebhookDelivery; payload: string } | null> {
    const k = this.ctx.keys;
    const [hash, attempts] = await Promise.all([
      this.ctx.redis.hgetall(k.webhookDelivery(tenant, deliveryId)),
      this.ctx.redis.lrange(k.webhookDeliveryAttempts(tenant, deliveryId), 0, -1),
    ]);
    const delivery = toDelivery(deliveryId, hash, attempts);
    return delivery ? { delivery, payload: hash.payload } : null;
  }

  /** The endpoint's deliveries, newest first; ids whose record has expired are dropped from the log. */
  async list(tenant: string, webhookId: string, limit: number): Promise<WebhookDelivery[]> {
    const k = this.ctx.keys;
    const ids = await this.ctx.redis.zrevrange(k.webhookDeliveries(tenant, webhookId), 0, limit - 1);
    const pipeline = this.ctx.redis.pipeline();
    for (const id of ids) {
      pipeline.hgetall(k.webhookDelivery(tenant, id));
      pipeline.lrange(k.webhookDeliveryAttempts(tenant, id), 0, -1);
    }
    const replies = (await pipeline.exec()) ?? [];
    const deliveries: WebhookDelivery[] = [];
    const gone: string[] = [];
    ids.forEach((id, i) => {
      const hash = replies[2 * i]?.[1] as Record<string, string> | undefined;
      const attempts = (replies[2 * i + 1]?.[1] as string[] | undefined) ?? [];
      const delivery = hash ? toDelivery(id, hash, attempts) : null;
      if (delivery) {
        deliveries.push(delivery);
      } else {
        gone.push(id);
      }
    });
    if (gone.length > 0) {
      await this.ctx.redis.zrem(k.webhookDeliveries(tenant, webhookId), ...gone);
    }
    return deliveries;
  }
}

function toDelivery(id: string, hash: Record<string, string>, attempts: string[]): WebhookDelivery | null {
  if (!hash.status) {
    return null;
  }
  const result = WebhookDeliverySchema.safeParse({
    id,
    webhookId: hash.webhookId,
    eventId: hash.eventId,
    eventType: hash.eventType,
    seq: Number(hash.seq),
    runId: hash.runId,
    status: hash.status,
    attempts: Number(hash.attempts ?? 0),
    ...(hash.lastStatus ? { lastStatus: Number(hash.lastStatus) } : {}),
    ...(hash.lastError ? { lastError: hash.lastError } : {}),
    ...(hash.replayOf ? { replayOf: hash.replayOf } : {}),
    createdAt: hash.createdAt,
    updatedAt: hash.updatedAt,
    ...(hash.deliveredAt ? { deliveredAt: hash.deliveredAt } : {}),
    attemptLog: attempts.flatMap((json) => {
      try {
        const attempt = DeliveryAttemptSchema.safeParse(JSON.parse(json));
        return attempt.success ? [attempt.data] : [];
      } catch {
        return [];
      }
    }),
  });
  return result.success ? result.data : null;
}
