import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { WEBHOOK_LIMITS } from '@parley/contracts';
import { StoreContext } from '../store.context';
import { WebhookDeliveryRepository, type NewDelivery } from './webhook-delivery.repository';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const TENANT = 'acme';
const WEBHOOK = 'wh_1';

describe("an endpoint's delivery log", () => {
  let redis: Redis;
  let ctx: StoreContext;
  let deliveries: WebhookDeliveryRepository;

  beforeEach(async () => {
    redis = new Redis(REDIS_URL);
    ctx = new StoreContext(redis, { prefix: `wd-${randomUUID()}`, eventsMaxLen: 100, retentionSecs: 600, leaseMs: 1000 });
    deliveries = new WebhookDeliveryRepository(ctx);
    await redis.hset(ctx.keys.webhooks(TENANT), WEBHOOK, '{}');
  });

  afterEach(async () => {
    for await (const keys of redis.scanStream({ match: `${ctx.options.prefix}:*`, count: 1000 })) {
      if ((keys as string[]).length > 0) {
        await redis.del(...(keys as string[]));
      }
    }
    await redis.quit();
  });

  const delivery = (seq: number): NewDelivery => ({
    deliveryId: `d${seq}`,
    webhookId: WEBHOOK,
    eventId: `evt_${seq}`,
    eventType: 'run.finished',
    seq,
    runId: 'run-1',
    payload: '{}',
  });

  it('keeps the newest deliveries: older finished ones go, an older one still pending is recorded as failed, not dropped', async () => {
    const cap = WEBHOOK_LIMITS.deliveriesPerEndpoint;
    const start = Date.now();
    for (let seq = 1; seq <= cap; seq++) {
      expect(await deliveries.create(TENANT, delivery(seq), new Date(start + seq))).toEqual({ status: 'created', givenUp: 0 });
    }
    await deliveries.record(TENANT, 'd1', { status: 'delivered', lastStatus: 200 });
    await deliveries.record(TENANT, 'd2', { status: 'failed', lastStatus: 410 });

    // Two finished ones make room; the third oldest is still being retried.
    expect(await deliveries.create(TENANT, delivery(cap + 1), new Date(start + cap + 1))).toEqual({ status: 'created', givenUp: 0 });
    expect(await deliveries.create(TENANT, delivery(cap + 2), new Date(start + cap + 2))).toEqual({ status: 'created', givenUp: 0 });
    expect(await deliveries.create(TENANT, delivery(cap + 3), new Date(start + cap + 3))).toEqual({ status: 'created', givenUp: 1 });

    expect(await deliveries.get(TENANT, 'd1')).toBeNull();
    expect(await deliveries.get(TENANT, 'd2')).toBeNull();
    const givenUp = await deliveries.get(TENANT, 'd3');
    expect(givenUp?.delivery).toMatchObject({ status: 'failed', lastError: expect.stringContaining('given up') });
    expect(await redis.ttl(ctx.keys.webhookDelivery(TENANT, 'd3'))).toBeGreaterThan(0);
    // A try of d3 that was under way when it was given up records nothing: it stays given up.
    const attempt = { at: new Date().toISOString(), durationMs: 5, status: 503, error: 'HTTP 503' };
    expect(await deliveries.record(TENANT, 'd3', { attempt, status: 'pending', lastStatus: 503 })).toBeNull();
    expect((await deliveries.get(TENANT, 'd3'))?.delivery).toMatchObject({ status: 'failed', attempts: 0, lastError: expect.stringContaining('given up') });
    // One that went through, though, is recorded as delivered: the receiver has it.
    expect(await deliveries.record(TENANT, 'd3', { attempt: { ...attempt, status: 200 }, status: 'delivered', lastStatus: 200 })).toBe(1);
    expect((await deliveries.get(TENANT, 'd3'))?.delivery).toMatchObject({ status: 'delivered', attempts: 1 });
    expect(await redis.zcard(ctx.keys.webhookDeliveries(TENANT, WEBHOOK))).toBe(cap);
    expect((await deliveries.list(TENANT, WEBHOOK, 1)).map((d) => d.id)).toEqual([`d${cap + 3}`]);
  });
});
