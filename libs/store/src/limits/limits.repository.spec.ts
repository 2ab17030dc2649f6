import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { RateLimitedError } from '@parley/contracts';
import { ParleyStore } from '../store';
import { SOCKET_SLOT_TTL_MS } from './limits.repository';

/** The tenant-limit scripts against a real Redis, under a prefix of their own (keys deleted after). */
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const OFF = { runsPerMinute: 0, userRunsPerMinute: 0, concurrentRuns: 0, userConcurrentRuns: 0, openInteractions: 0 };
const TENANT_ONLY = (perMinute: number) => ({ messagesPerMinute: perMinute, userMessagesPerMinute: 0 });

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
    await store.limits.hitMessage('acme', 'alice', TENANT_ONLY(2));
    await store.limits.hitMessage('acme', 'alice', TENANT_ONLY(2));
    const error = await refusal(store.limits.hitMessage('acme', 'alice', TENANT_ONLY(2)));
    expect(error).toBeInstanceOf(RateLimitedError);
    expect(error?.details).toEqual({ limit: 'messages_per_minute', retryAfterSecs: expect.any(Number) });
    expect(error?.retryAfterSecs).toBeGreaterThan(0);
    expect(error?.retryAfterSecs).toBeLessThanOrEqual(60);
    // A refusal counts nothing; other tenants have their own window.
    expect(await redis.get(store.ctx.keys.rateWindow('acme', 'messages'))).toBe('2');
    await store.limits.hitMessage('globex', 'alice', TENANT_ONLY(2));
    // A hit given back (the message was not kept) leaves no trace once the count is back to nothing.
    await store.limits.refundMessage('globex', 'alice', TENANT_ONLY(2));
    expect(await redis.exists(store.ctx.keys.rateWindow('globex', 'messages'))).toBe(0);
    await store.limits.refundMessage('acme', 'alice', TENANT_ONLY(2));
    await store.limits.hitMessage('acme', 'alice', TENANT_ONLY(2));
  });

  it("counts a user's messages in a window of their own besides the tenant's; either limit refuses and counts nothing", async () => {
    const limits = { messagesPerMinute: 3, userMessagesPerMinute: 2 };
    const k = store.ctx.keys;
    await store.limits.hitMessage('acme', 'alice', limits);
    await store.limits.hitMessage('acme', 'alice', limits);
    const alice = await refusal(store.limits.hitMessage('acme', 'alice', limits));
    expect(alice?.details).toEqual({ limit: 'user_messages_per_minute', retryAfterSecs: expect.any(Number) });
    expect(alice?.message).toContain('alice');
    // Alice's refusal counted nothing: the tenant has room for Bob.
    expect(await redis.get(k.rateWindow('acme', 'messages'))).toBe('2');
    await store.limits.hitMessage('acme', 'bob', limits);
    const tenant = await refusal(store.limits.hitMessage('acme', 'carol', limits));
    expect(tenant?.details).toEqual({ limit: 'messages_per_minute', retryAfterSecs: expect.any(Number) });
    expect(await redis.exists(k.userRateWindow('acme', 'messages', 'carol'))).toBe(0);
    // A sender not limited on its own (a service) counts on the tenant's window only.
    await store.limits.refundMessage('acme', 'bob', limits);
    await store.limits.hitMessage('acme', null, limits);
    expect([await redis.get(k.rateWindow('acme', 'messages')), await redis.exists(k.userRateWindow('acme', 'messages', 'bob'))]).toEqual(['3', 0]);
    // A refund gives back both hits.
    await store.limits.refundMessage('acme', 'alice', limits);
    expect([await redis.get(k.rateWindow('acme', 'messages')), await redis.get(k.userRateWindow('acme', 'messages', 'alice'))]).toEqual(['2', '1']);
    await store.limits.hitMessage('acme', 'alice', limits);
  });

  it('when both windows are full, names the one that frees last, for messages and for starts', async () => {
    const k = store.ctx.keys;
    const fill = async (key: string, count: number, ttlMs: number) => void (await redis.set(key, String(count), 'PX', ttlMs));
    await fill(k.rateWindow('acme', 'messages'), 5, 10_000);
    await fill(k.userRateWindow('acme', 'messages', 'alice'), 2, 50_000);
    const messages = await refusal(store.limits.hitMessage('acme', 'alice', { messagesPerMinute: 5, userMessagesPerMinute: 2 }));
    expect(messages?.details).toEqual({ limit: 'user_messages_per_minute', retryAfterSecs: 50 });
    await fill(k.rateWindow('acme', 'runs'), 5, 40_000);
    await fill(k.userRateWindow('acme', 'runs', 'alice'), 2, 20_000);
    const start = await refusal(store.limits.admitRun('acme', 'alice', 'r1', { ...OFF, runsPerMinute: 5, userRunsPerMinute: 2 }));
    expect(start?.details).toEqual({ limit: 'runs_per_minute', retryAfterSecs: 40 });
    await redis.pexpire(k.userRateWindow('acme', 'runs', 'alice'), 45_000);
    const later = await refusal(store.limits.admitRun('acme', 'alice', 'r1', { ...OFF, runsPerMinute: 5, userRunsPerMinute: 2 }));
    expect(later?.details).toEqual({ limit: 'user_runs_per_minute', retryAfterSecs: 45 });
  });

  it("refuses a start past the owner's runs per minute without counting it, while other owners may start", async () => {
    const limits = { ...OFF, runsPerMinute: 10, userRunsPerMinute: 2, concurrentRuns: 10 };
    const k = store.ctx.keys;
    await store.limits.admitRun('acme', 'alice', 'a1', limits);
    await store.limits.admitRun('acme', 'alice', 'a2', limits);
    const error = await refusal(store.limits.admitRun('acme', 'alice', 'a3', limits));
    expect(error?.details).toEqual({ limit: 'user_runs_per_minute', retryAfterSecs: expect.any(Number) });
    expect(error?.retryAfterSecs).toBeLessThanOrEqual(60);
    expect([await redis.get(k.rateWindow('acme', 'runs')), await redis.zcard(k.activeRuns('acme'))]).toEqual(['2', 2]);
    await store.limits.admitRun('acme', 'bob', 'b1', limits);
    // An admission taken back (the run was not created) gives back the owner's hit too.
    await store.limits.releaseRun('acme', 'alice', 'a2', limits);
    expect([await redis.get(k.rateWindow('acme', 'runs')), await redis.get(k.userRateWindow('acme', 'runs', 'alice'))]).toEqual(['2', '1']);
    await store.limits.admitRun('acme', 'alice', 'a4', limits);
  });

  it('refuses a start past the open-interaction limit without writing anything', async () => {
    await redis.zadd(store.ctx.keys.openInteractions('acme'), '1', 'ix-1', '2', 'ix-2');
    const error = await refusal(store.limits.admitRun('acme', 'alice', 'r1', { ...OFF, runsPerMinute: 10, userRunsPerMinute: 10, concurrentRuns: 10, openInteractions: 2 }));
    expect(error?.details).toEqual({ limit: 'open_interactions', retryAfterSecs: 30 });
    expect(await redis.exists(store.ctx.keys.activeRuns('acme'), store.ctx.keys.rateWindow('acme', 'runs'), store.ctx.keys.userRateWindow('acme', 'runs', 'alice'))).toBe(0);
  });

  it('prunes ended and long-missing runs from the active set only at the limit', async () => {
    const now = Date.now();
    const k = store.ctx.keys;
    await store.limits.admitRun('acme', 'alice', 'ended', { ...OFF, concurrentRuns: 3 }, now - 60_000);
    await store.limits.admitRun('acme', 'alice', 'gone', { ...OFF, concurrentRuns: 3 }, now - 60_000);
    await store.limits.admitRun('acme', 'alice', 'fresh', { ...OFF, concurrentRuns: 3 }, now);
    await redis.hset(k.run('acme', 'ended'), 'status', 'finished');
    // 'fresh' has no hash yet but is within its grace: it still counts.
    await store.limits.admitRun('acme', 'alice', 'next', { ...OFF, concurrentRuns: 3 }, now);
    expect(await redis.zrange(k.activeRuns('acme'), '0', '-1')).toEqual(['fresh', 'next']);
    await store.limits.admitRun('acme', 'alice', 'third', { ...OFF, concurrentRuns: 3 }, now);
    const error = await refusal(store.limits.admitRun('acme', 'alice', 'fourth', { ...OFF, concurrentRuns: 3 }, now));
    expect(error?.details).toEqual({ limit: 'concurrent_runs', retryAfterSecs: 30 });
    expect(await redis.zcard(k.activeRuns('acme'))).toBe(3);
  });

  it("refuses a start past the owner's runs that have not ended, while others may start; ended runs make room", async () => {
    const k = store.ctx.keys;
    const limits = { ...OFF, concurrentRuns: 10, userConcurrentRuns: 2 };
    await store.limits.admitRun('acme', 'bob', 'b1', limits);
    await store.limits.admitRun('acme', 'bob', 'b2', limits);
    const error = await refusal(store.limits.admitRun('acme', 'bob', 'b3', limits));
    expect(error?.details).toEqual({ limit: 'user_concurrent_runs', retryAfterSecs: 30 });
    expect(error?.message).toBe('bob has 2 runs that have not ended (limit per user 2)');
    // Nothing was written for the refused start, and alice is not held back by bob's runs.
    expect([await redis.zrange(k.activeRuns('acme'), '0', '-1'), await redis.zrange(k.ownerActiveRuns('acme', 'bob'), '0', '-1')]).toEqual([
      ['b1', 'b2'],
      ['b1', 'b2'],
    ]);
    await store.limits.admitRun('acme', 'alice', 'a1', limits);
    // One of bob's runs ends: the next start finds it gone and is admitted.
    await redis.hset(k.run('acme', 'b1'), 'status', 'finished');
    await store.limits.admitRun('acme', 'bob', 'b3', limits);
    expect(await redis.zrange(k.ownerActiveRuns('acme', 'bob'), '0', '-1')).toEqual(['b2', 'b3']);
    expect(await redis.pttl(k.ownerActiveRuns('acme', 'bob'))).toBeGreaterThan(0);
    // An admission taken back leaves the owner's count too.
    await store.limits.releaseRun('acme', 'bob', 'b3', limits);
    expect(await redis.zrange(k.ownerActiveRuns('acme', 'bob'), '0', '-1')).toEqual(['b2']);
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
