import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { RateLimitedError } from '@parley/contracts';
import { ParleyStore } from '../store';
import { SOCKET_SLOT_TTL_MS } from './limits.repository';

/** The tenant-limit scripts against a real Redis, under a prefix of their own (keys deleted after). */
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const OFF = { runsPerMinute: 0, concurrentRuns: 0, openInteractions: 0 };

describe('LimitsRepository', () => {
  let redis: Redis;
  let store: ParleyStore;
  let prefix: string;

  beforeEach(() => {
    prefix = `tl-${randomUUID()}`;
    redis = new Redis(REDIS_URL);
    store = new ParleyStore(redis, { prefix, eventsMaxLen: 1000, retentionSecs: 3600, leaseMs: 2000 });
  });

  afterEach(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) {
      await redis.unlink(...keys);
    }
    await redis.quit();
  });

  const refusal = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error as RateLimitedError);

  it('counts messages in a fixed window and refuses past it with the time left', async () => {
    await store.limits.hitMessage('acme', 2);
    await store.limits.hitMessage('acme', 2);
    const error = await refusal(store.limits.hitMessage('acme', 2));
    expect(error).toBeInstanceOf(RateLimitedError);
    expect(error?.details).toEqual({ limit: 'messages_per_minute', retryAfterSecs: expect.any(Number) });
    expect(error?.retryAfterSecs).toBeGreaterThan(0);
    expect(error?.retryAfterSecs).toBeLessThanOrEqual(60);
    // A refusal counts nothing; other tenants have their own window.
    expect(await redis.get(store.ctx.keys.rateWindow('acme', 'messages'))).toBe('2');
    await store.limits.hitMessage('globex', 2);
    // A hit given back (the message was not kept) leaves no trace once the count is back to nothing.
    await store.limits.refundMessage('globex', 2);
    expect(await redis.exists(store.ctx.keys.rateWindow('globex', 'messages'))).toBe(0);
    await store.limits.refundMessage('acme', 2);
    await store.limits.hitMessage('acme', 2);
  });

  it('refuses a start past the open-interaction limit without writing anything', async () => {
    await redis.zadd(store.ctx.keys.openInteractions('acme'), '1', 'ix-1', '2', 'ix-2');
    const error = await refusal(store.limits.admitRun('acme', 'r1', { ...OFF, runsPerMinute: 10, concurrentRuns: 10, openInteractions: 2 }));
    expect(error?.details).toEqual({ limit: 'open_interactions', retryAfterSecs: 30 });
    expect(await redis.exists(store.ctx.keys.activeRuns('acme'), store.ctx.keys.rateWindow('acme', 'runs'))).toBe(0);
  });

  it('prunes ended and long-missing runs from the active set only at the limit', async () => {
    const now = Date.now();
    const k = store.ctx.keys;
    await store.limits.admitRun('acme', 'ended', { ...OFF, concurrentRuns: 3 }, now - 60_000);
    await store.limits.admitRun('acme', 'gone', { ...OFF, concurrentRuns: 3 }, now - 60_000);
    await store.limits.admitRun('acme', 'fresh', { ...OFF, concurrentRuns: 3 }, now);
    await redis.hset(k.run('acme', 'ended'), 'status', 'finished');
    // 'fresh' has no hash yet but is within its grace: it still counts.
    await store.limits.admitRun('acme', 'next', { ...OFF, concurrentRuns: 3 }, now);
    expect(await redis.zrange(k.activeRuns('acme'), '0', '-1')).toEqual(['fresh', 'next']);
    await store.limits.admitRun('acme', 'third', { ...OFF, concurrentRuns: 3 }, now);
    const error = await refusal(store.limits.admitRun('acme', 'fourth', { ...OFF, concurrentRuns: 3 }, now));
    expect(error?.details).toEqual({ limit: 'concurrent_runs', retryAfterSecs: 30 });
    expect(await redis.zcard(k.activeRuns('acme'))).toBe(3);
  });

  it('counts live sockets across gateways; expired slots stop counting', async () => {
    const now = Date.now();
    const two = { tenant: 2, user: 0 };
    await store.limits.acquireSocket('acme', 'alice', 'gw1:a', two, now - SOCKET_SLOT_TTL_MS - 1);
    const b = await store.limits.acquireSocket('acme', 'alice', 'gw2:b', two, now);
    // gw1:a expired (its gateway stopped refreshing it): there is room for one more.
    await store.limits.acquireSocket('acme', 'bob', 'gw2:c', two, now);
    expect(await store.limits.liveSockets('acme', now)).toBe(2);
    const error = await refusal(store.limits.acquireSocket('acme', 'carol', 'gw1:d', two, now));
    expect(error?.details).toMatchObject({ limit: 'sockets' });
    await store.limits.refreshSockets(new Map([['acme', [b]]]), now + SOCKET_SLOT_TTL_MS / 2);
    expect(await store.limits.liveSockets('acme', now + SOCKET_SLOT_TTL_MS + 1)).toBe(1);
    await store.limits.releaseSocket('acme', b);
    expect(await store.limits.liveSockets('acme', now)).toBe(1);
  });

  it("counts a user's sockets within the tenant's: one user cannot take every connection of the tenant", async () => {
    const now = Date.now();
    const limits = { tenant: 10, user: 2 };
    await store.limits.acquireSocket('globex', 'mallory', 'gw1:a', limits, now);
    await store.limits.acquireSocket('globex', 'mallory', 'gw2:b', limits, now);
    const error = await refusal(store.limits.acquireSocket('globex', 'mallory', 'gw1:c', limits, now));
    expect(error?.details).toMatchObject({ limit: 'user_sockets' });
    // Others still connect, one whose id ends like another's included (the user part is a digest).
    await store.limits.acquireSocket('globex', 'alice', 'gw1:d', limits, now);
    await store.limits.acquireSocket('globex', 'x\nmallory', 'gw1:e', limits, now);
    expect(await store.limits.liveSockets('globex', now)).toBe(4);
  });
});
