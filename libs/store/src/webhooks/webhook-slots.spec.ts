import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { StoreContext } from '../store.context';
import { WebhookSlots } from './webhook-slots';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe("an endpoint's sending slots", () => {
  let redis: Redis;
  let ctx: StoreContext;
  let slots: WebhookSlots;
  const T0 = 1_800_000_000_000;

  beforeEach(() => {
    redis = new Redis(REDIS_URL);
    ctx = new StoreContext(redis, { prefix: `ws-${randomUUID()}`, eventsMaxLen: 100, retentionSecs: 600, leaseMs: 1000 });
    slots = new WebhookSlots(ctx, { inFlight: 2, failuresToPause: 3, pauseMs: 1_000, longestPauseMs: 4_000, slotLapseMs: 10_000 });
  });

  afterEach(async () => {
    await redis.del(ctx.keys.webhookInflight('acme', 'wh'), ctx.keys.webhookHealth('acme', 'wh'));
    await redis.quit();
  });

  it('lets a few deliveries in at once; a slot given back, or lapsed, makes room; one taken again counts once', async () => {
    expect(await slots.take('acme', 'wh', 'd1', T0)).toEqual({ status: 'ok' });
    expect(await slots.take('acme', 'wh', 'd2', T0)).toEqual({ status: 'ok' });
    expect(await slots.take('acme', 'wh', 'd3', T0)).toEqual({ status: 'busy', averageMs: 0 });
    // d1's try was cut short and it comes back: it still holds its slot.
    expect(await slots.take('acme', 'wh', 'd1', T0 + 1)).toEqual({ status: 'ok' });

    await slots.give('acme', 'wh', 'd2', true, 80, T0 + 2);
    expect(await slots.take('acme', 'wh', 'd3', T0 + 3)).toEqual({ status: 'ok' });
    expect(await slots.take('acme', 'wh', 'd4', T0 + 4)).toEqual({ status: 'busy', averageMs: 80 });
    // Nobody gives d1's and d3's slots back (their sender died): they lapse.
    expect(await slots.take('acme', 'wh', 'd4', T0 + 10_002)).toEqual({ status: 'ok' });
  });

  it('pauses an endpoint after failures in a row, longer each further failure, one try at a time after a pause; an answer clears it', async () => {
    expect(await slots.give('acme', 'wh', 'd1', false, 10, T0)).toEqual({ failures: 1, pausedUntil: null });
    expect(await slots.give('acme', 'wh', 'd2', false, 10, T0)).toEqual({ failures: 2, pausedUntil: null });
    expect(await slots.give('acme', 'wh', 'd3', false, 10, T0)).toEqual({ failures: 3, pausedUntil: T0 + 1_000 });
    expect(await slots.take('acme', 'wh', 'd4', T0 + 500)).toEqual({ status: 'paused', until: T0 + 1_000 });

    // Past the pause, one try finds out.
    expect(await slots.take('acme', 'wh', 'd4', T0 + 1_001)).toEqual({ status: 'ok' });
    expect(await slots.take('acme', 'wh', 'd5', T0 + 1_001)).toMatchObject({ status: 'busy' });
    expect(await slots.give('acme', 'wh', 'd4', false, 10, T0 + 1_002)).toEqual({ failures: 4, pausedUntil: T0 + 1_002 + 2_000 });
    expect(await slots.give('acme', 'wh', 'd6', false, 10, T0 + 3_003)).toEqual({ failures: 5, pausedUntil: T0 + 3_003 + 4_000 });
    expect(await slots.give('acme', 'wh', 'd7', false, 10, T0 + 7_004)).toEqual({ failures: 6, pausedUntil: T0 + 7_004 + 4_000 });

    expect(await slots.give('acme', 'wh', 'd8', true, 10, T0 + 11_005)).toEqual({ failures: 0, pausedUntil: null });
    expect(await slots.take('acme', 'wh', 'd9', T0 + 11_006)).toEqual({ status: 'ok' });
    expect(await slots.take('acme', 'wh', 'd10', T0 + 11_006)).toEqual({ status: 'ok' });
  });
});
