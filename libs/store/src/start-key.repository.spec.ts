import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { StoreContext } from './store.context';
import { StartKeyRepository } from './start-key.repository';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('StartKeyRepository', () => {
  let redis: Redis;
  let ctx: StoreContext;
  let keys: StartKeyRepository;

  beforeEach(() => {
    redis = new Redis(REDIS_URL);
    ctx = new StoreContext(redis, { prefix: `sk-${randomUUID()}`, eventsMaxLen: 100, retentionSecs: 60, leaseMs: 1000 });
    keys = new StartKeyRepository(ctx);
  });

  afterEach(async () => {
    await redis.del(ctx.keys.startKeyPending('acme', 'alice', 'k'));
    await redis.quit();
  });

  it('the first start marks the key; a second is told which run is being made, until the first is done', async () => {
    expect(await keys.mark('acme', 'alice', 'k', 'run-1')).toEqual({ status: 'marked' });
    // The same mark sent again (its first reply lost with a dropped connection) is still this start's.
    expect(await keys.mark('acme', 'alice', 'k', 'run-1')).toEqual({ status: 'marked' });
    expect(await keys.mark('acme', 'alice', 'k', 'run-2')).toEqual({ status: 'starting', runId: 'run-1' });
    expect(await keys.isStarting('acme', 'alice', 'k', 'run-1')).toBe(true);
    // Another caller's key, or another key, is another mark.
    expect(await keys.mark('acme', 'bob', 'k', 'run-3')).toEqual({ status: 'marked' });
    await redis.del(ctx.keys.startKeyPending('acme', 'bob', 'k'));

    await keys.done('acme', 'alice', 'k', 'run-1');
    expect(await keys.isStarting('acme', 'alice', 'k', 'run-1')).toBe(false);
    expect(await keys.mark('acme', 'alice', 'k', 'run-2')).toEqual({ status: 'marked' });
  });

  it('a start done after its mark expired leaves the mark of the start that took the key since', async () => {
    expect(await keys.mark('acme', 'alice', 'k', 'run-1')).toEqual({ status: 'marked' });
    await redis.del(ctx.keys.startKeyPending('acme', 'alice', 'k'));
    expect(await keys.mark('acme', 'alice', 'k', 'run-2')).toEqual({ status: 'marked' });
    await keys.done('acme', 'alice', 'k', 'run-1');
    expect(await keys.isStarting('acme', 'alice', 'k', 'run-2')).toBe(true);
    expect(await redis.pttl(ctx.keys.startKeyPending('acme', 'alice', 'k'))).toBeGreaterThan(0);
  });
});
