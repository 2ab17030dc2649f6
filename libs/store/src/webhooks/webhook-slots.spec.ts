import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { StoreContext } from '../store.context';
import { WebhookSlots } from './webhook-slots';
import { WebhookRepository } from './webhook.repository';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe("an endpoint's sending slots", () => {
  let redis: Redis;
  let ctx: StoreContext;
  let slots: WebhookSlots;
  const T0 = 1_800_000_000_000;

  beforeEach(() => {
    redis = new Redis(REDIS_URL);
    ctx = new StoreContext(redis, { prefix: `ws-${randomUUID()}`, eventsMaxLen: 100, retentionSecs: 600, leaseMs: 1000 });
    slots = new WebhookSlots(ctx, { inFlight: 2, tenantInFlight: 3, failuresToPause: 3, pauseMs: 1_000, longestPauseMs: 4_000, slotLapseMs: 10_000 });
  });

  afterEach(async () => {
    jest.restoreAllMocks();
    const endpoints = ['wh', 'wh2'].flatMap((id) => [ctx.keys.webhookInflight('acme', id), ctx.keys.webhookHealth('acme', id), ctx.keys.webhookWaiting('acme', id)]);
    await redis.del(...endpoints, ctx.keys.webhookTenantInflight('acme'), ctx.keys.webhookTenantInflight('globex'), ctx.keys.webhookInflight('globex', 'wh'));
    await redis.quit();
  });

  it('lets a few deliveries in at once; a slot given back, or lapsed, makes room; one taken again counts once', async () => {
    expect(await slots.take('acme', 'wh', 'd1', T0)).toEqual({ status: 'ok' });
    expect(await slots.take('acme', 'wh', 'd2', T0)).toEqual({ status: 'ok' });
    expect(await slots.take('acme', 'wh', 'd3', T0)).toEqual({ status: 'busy', retryInMs: 50 });
    // d1's try was cut short and it comes back: it still holds its slot.
    expect(await slots.take('acme', 'wh', 'd1', T0 + 1)).toEqual({ status: 'ok' });

    await slots.give('acme', 'wh', 'd2', true, 80, T0 + 2);
    expect(await slots.take('acme', 'wh', 'd3', T0 + 3)).toEqual({ status: 'ok' });
    expect(await slots.take('acme', 'wh', 'd4', T0 + 4)).toEqual({ status: 'busy', retryInMs: 80 });
    // Nobody gives d1's and d3's slots back (their senders died): both lapse.
    expect(await slots.take('acme', 'wh', 'd4', T0 + 10_004)).toEqual({ status: 'ok' });
    expect(await slots.take('acme', 'wh', 'd5', T0 + 10_004)).toEqual({ status: 'ok' });
  });

  it("holds a tenant's deliveries in flight, to all its endpoints, to its bound; another tenant's are not held back", async () => {
    expect(await slots.take('acme', 'wh', 'd1', T0)).toEqual({ status: 'ok' });
    expect(await slots.take('acme', 'wh', 'd2', T0)).toEqual({ status: 'ok' });
    expect(await slots.take('acme', 'wh2', 'e1', T0)).toEqual({ status: 'ok' });
    // wh2 has room of its own, the tenant has none.
    expect(await slots.take('acme', 'wh2', 'e2', T0)).toEqual({ status: 'busy', retryInMs: 50 });
    expect(await slots.take('globex', 'wh', 'g1', T0)).toEqual({ status: 'ok' });
    // One taken again counts once; one given back, or lapsed, makes room.
    expect(await slots.take('acme', 'wh2', 'e1', T0 + 1)).toEqual({ status: 'ok' });
    await slots.give('acme', 'wh', 'd1', true, 80, T0 + 2);
    expect(await slots.take('acme', 'wh2', 'e2', T0 + 3)).toEqual({ status: 'ok' });
    expect(await slots.take('acme', 'wh2', 'e3', T0 + 4)).toEqual({ status: 'busy', retryInMs: 50 });
    expect(await slots.take('acme', 'wh2', 'e3', T0 + 10_004)).toEqual({ status: 'ok' });
  });

  it('tells a delivery kept waiting to look again about when its turn could come: later the more are waiting', async () => {
    await slots.take('acme', 'wh', 'd1', T0);
    await slots.take('acme', 'wh', 'd2', T0);
    await slots.give('acme', 'wh', 'd2', true, 100, T0);
    await slots.take('acme', 'wh', 'd2', T0);
    const waits: number[] = [];
    for (let n = 3; n <= 10; n++) {
      const busy = await slots.take('acme', 'wh', `d${n}`, T0 + 1);
      waits.push(busy.status === 'busy' ? busy.retryInMs : -1);
    }
    // 100 ms a try, 2 at a time: the 8th waiter's turn is about 4 tries away.
    expect(waits).toEqual([100, 100, 150, 200, 250, 300, 350, 400]);
    // One that got its slot no longer counts among the waiting.
    await slots.give('acme', 'wh', 'd1', true, 100, T0 + 2);
    expect(await slots.take('acme', 'wh', 'd3', T0 + 2)).toEqual({ status: 'ok' });
    expect(await slots.take('acme', 'wh', 'd11', T0 + 3)).toEqual({ status: 'busy', retryInMs: 400 });
  });

  it('pauses an endpoint after failures in a row, longer each further failure, one try at a time after a pause; an answer clears it', async () => {
    expect(await slots.give('acme', 'wh', 'd1', false, 10, T0)).toEqual({ failures: 1, pausedUntil: null });
    expect(await slots.give('acme', 'wh', 'd2', false, 10, T0)).toEqual({ failures: 2, pausedUntil: null });
    expect(await slots.give('acme', 'wh', 'd3', false, 10, T0)).toEqual({ failures: 3, pausedUntil: T0 + 1_000 });
    expect(await slots.take('acme', 'wh', 'd4', T0 + 500)).toEqual({ status: 'paused', until: T0 + 1_000, retryInMs: 500 });

    // Past the pause, one try finds out.
    expect(await slots.take('acme', 'wh', 'd4', T0 + 1_001)).toEqual({ status: 'ok' });
    // The others wait their turn one try at a time (average try 10 ms, counted as 50 at least).
    expect(await slots.take('acme', 'wh', 'd5', T0 + 1_001)).toEqual({ status: 'busy', retryInMs: 50 });
    expect(await slots.take('acme', 'wh', 'd6', T0 + 1_001)).toEqual({ status: 'busy', retryInMs: 100 });
    expect(await slots.take('acme', 'wh', 'd7', T0 + 1_001)).toEqual({ status: 'busy', retryInMs: 150 });
    // One that stops waiting without a slot (given up) no longer counts.
    await slots.forget('acme', 'wh', 'd6');
    expect(await slots.take('acme', 'wh', 'd7', T0 + 1_001)).toEqual({ status: 'busy', retryInMs: 100 });
    expect(await slots.give('acme', 'wh', 'd4', false, 10, T0 + 1_002)).toEqual({ failures: 4, pausedUntil: T0 + 1_002 + 2_000 });
    expect(await slots.give('acme', 'wh', 'd6', false, 10, T0 + 3_003)).toEqual({ failures: 5, pausedUntil: T0 + 3_003 + 4_000 });
    expect(await slots.give('acme', 'wh', 'd7', false, 10, T0 + 7_004)).toEqual({ failures: 6, pausedUntil: T0 + 7_004 + 4_000 });

    expect(await slots.give('acme', 'wh', 'd8', true, 10, T0 + 11_005)).toEqual({ failures: 0, pausedUntil: null });
    expect(await slots.take('acme', 'wh', 'd9', T0 + 11_006)).toEqual({ status: 'ok' });
    expect(await slots.take('acme', 'wh', 'd10', T0 + 11_006)).toEqual({ status: 'ok' });
  });

  it("keeps time by Redis's clock unless told otherwise, so a host whose clock runs ahead frees no live slot", async () => {
    const redisNow = async (): Promise<number> => {
      const [secs, micros] = await redis.time();
      return Number(secs) * 1000 + Math.floor(Number(micros) / 1000);
    };
    const before = await redisNow();
    // This host's clock an hour ahead of Redis's.
    jest.spyOn(Date, 'now').mockReturnValue(before + 3_600_000);
    expect(await slots.take('acme', 'wh', 'd1')).toEqual({ status: 'ok' });
    const lapsesAt = Number(await redis.zscore(ctx.keys.webhookInflight('acme', 'wh'), 'd1'));
    expect(lapsesAt).toBeGreaterThanOrEqual(before + 10_000);
    expect(lapsesAt).toBeLessThanOrEqual((await redisNow()) + 10_000);
    for (let n = 1; n <= 3; n++) {
      await slots.give('acme', 'wh', `f${n}`, false, 10);
    }
    const taken = await slots.take('acme', 'wh', 'd2');
    expect(taken).toMatchObject({ status: 'paused' });
    const until = taken.status === 'paused' ? taken.until : 0;
    expect(until).toBeGreaterThanOrEqual(before + 1_000);
    expect(until).toBeLessThanOrEqual((await redisNow()) + 1_000);
    // How long to wait is told as such: this host's clock (an hour ahead here) would read `until` as past.
    expect(taken.status === 'paused' ? taken.retryInMs : 0).toBeGreaterThan(0);
    expect(taken.status === 'paused' ? taken.retryInMs : 0).toBeLessThanOrEqual(1_000);
  });

  it('an endpoint given a new address, or turned back on, starts with no failures and no pause', async () => {
    const endpoints = new WebhookRepository(ctx);
    const created = await endpoints.create('acme', { url: 'https://hooks.example.com/a', events: ['run.finished'] }, 20);
    if (created.status !== 'created') {
      throw new Error('not created');
    }
    const { id } = created.webhook;
    try {
      for (let n = 1; n <= 3; n++) {
        await slots.give('acme', id, `d${n}`, false, 10, T0);
      }
      expect(await slots.take('acme', id, 'd4', T0 + 1)).toEqual({ status: 'paused', until: T0 + 1_000, retryInMs: 999 });
      await endpoints.update('acme', id, (current) => ({ ...current, description: 'renamed' }));
      expect(await slots.take('acme', id, 'd4', T0 + 1)).toMatchObject({ status: 'paused' });
      await endpoints.update('acme', id, (current) => ({ ...current, url: 'https://hooks.example.com/b' }));
      expect(await slots.take('acme', id, 'd4', T0 + 1)).toEqual({ status: 'ok' });
    } finally {
      await endpoints.delete('acme', id);
      expect(await redis.exists(ctx.keys.webhookInflight('acme', id), ctx.keys.webhookHealth('acme', id))).toBe(0);
    }
  });
});
