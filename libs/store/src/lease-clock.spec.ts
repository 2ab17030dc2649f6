import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Lease, NewRun } from './run.types';
import { ParleyStore } from './store';
import { RedisWorkspace } from './workspace.repository';
import { deleteKeys } from '../../../test/support/delete-keys';

/**
 * Leases are timed on Redis's clock, not on the clock of the process that takes, extends or judges
 * one: workers run on hosts whose clocks disagree. Each test moves this process's clock (only
 * `Date`: timers and I/O run as usual) to play a worker on such a host, against a real Redis.
 */

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const TENANT = 'acme';
const LEASE_MS = 2000;
const MINUTE = 60_000;

let redis: Redis;
let store: ParleyStore;
const prefix = `lc-${randomUUID()}`;

/** This process's clock, `offsetMs` off the real time from now on (and still running). */
function skewClock(offsetMs: number): void {
  jest.useRealTimers();
  jest.useFakeTimers({
    now: Date.now() + offsetMs,
    advanceTimers: true,
    doNotFake: ['hrtime', 'nextTick', 'performance', 'queueMicrotask', 'setImmediate', 'clearImmediate', 'setInterval', 'clearInterval', 'setTimeout', 'clearTimeout'],
  });
}

beforeAll(() => {
  redis = new Redis(REDIS_URL);
  store = new ParleyStore(redis, { prefix, eventsMaxLen: 1000, retentionSecs: 3600, leaseMs: LEASE_MS });
});

afterEach(() => {
  jest.useRealTimers();
});

afterAll(async () => {
  await deleteKeys(redis, `${prefix}:*`);
  await redis.quit();
});

async function newRun(): Promise<NewRun> {
  const run: NewRun = { tenant: TENANT, runId: randomUUID(), owner: 'alice', agent: 'demo', task: 'Plan a team offsite', trigger: 'api' };
  expect(await store.runs.create(run)).toEqual({ created: true, wake: 0 });
  return run;
}

async function acquire(run: NewRun, token: string): Promise<Lease> {
  expect(await store.runs.acquire(run.tenant, run.runId, run.owner, token)).toMatchObject({ status: 'acquired' });
  return { tenant: run.tenant, runId: run.runId, owner: run.owner, token };
}

/** How long the run's lease still lasts, by Redis's clock. */
async function leaseLeftMs(run: NewRun): Promise<number> {
  const [until, [seconds, micros]] = await Promise.all([
    redis.hget(store.ctx.keys.run(run.tenant, run.runId), 'leaseUntil'),
    redis.time(),
  ]);
  return Number(until) - (seconds * 1000 + Math.floor(micros / 1000));
}

describe('leases on Redis’s clock', () => {
  it('a worker whose clock runs a minute ahead cannot take over a live lease, nor end the run as unattended', async () => {
    const run = await newRun();
    const held = await acquire(run, 'token-a');

    skewClock(MINUTE);
    const taken = await store.runs.acquire(TENANT, run.runId, run.owner, 'token-b');
    expect(taken).toEqual({ status: 'busy', retryInMs: expect.any(Number) });
    expect(taken.status === 'busy' && taken.retryInMs <= LEASE_MS).toBe(true);
    // An unfenced end (a job out of attempts) must also leave a run held under a live lease alone.
    expect(await store.runs.end({ ...held, token: '' }, { status: 'failed', reason: 'internal_error', error: 'x' }, false)).toEqual({ status: 'lost' });
    expect(await redis.hget(store.ctx.keys.run(TENANT, run.runId), 'lease')).toBe('token-a');
  });

  it('a worker whose clock runs a minute behind takes, extends and keeps a lease a worker on time cannot take', async () => {
    const run = await newRun();
    skewClock(-MINUTE);
    const held = await acquire(run, 'token-a');
    expect(await leaseLeftMs(run)).toBeGreaterThan(LEASE_MS / 2);

    // Every step that extends the lease extends it from Redis's now, however far behind the caller is.
    expect(await store.runs.renew(held)).toBe('held');
    expect(await leaseLeftMs(run)).toBeGreaterThan(LEASE_MS / 2);
    expect(await store.runs.append(held, { type: 'task', text: 'more', at: new Date().toISOString() })).toMatchObject({ status: 'ok' });
    expect(await leaseLeftMs(run)).toBeGreaterThan(LEASE_MS / 2);
    const workspace = new RedisWorkspace(store.ctx, held, 1000);
    expect(await workspace.write('fx-1', 'a.md', 'hello')).toMatchObject({ status: 'applied' });
    expect(await leaseLeftMs(run)).toBeGreaterThan(LEASE_MS / 2);
    expect(await workspace.commit('fx-2', { writes: [{ path: 'b.md', content: 'hi' }], deletes: ['a.md'] }, '{"ok":true}')).toMatchObject({ status: 'applied' });
    expect(await leaseLeftMs(run)).toBeGreaterThan(LEASE_MS / 2);
    expect(await workspace.read('b.md')).toBe('hi');
    expect(await workspace.read('a.md')).toBeNull();

    jest.useRealTimers();
    expect(await store.runs.acquire(TENANT, run.runId, run.owner, 'token-b')).toEqual({ status: 'busy', retryInMs: expect.any(Number) });
  });
});
