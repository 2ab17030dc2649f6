import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { StoreContext } from './store.context';
import { waitFor } from '../../../test/support/wait-for';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('StoreContext.noteTenant', () => {
  let redis: Redis;
  let ctx: StoreContext;

  beforeEach(async () => {
    redis = new Redis(REDIS_URL);
    ctx = new StoreContext(redis, { prefix: `sc-${randomUUID()}`, eventsMaxLen: 100, retentionSecs: 60, leaseMs: 1000 });
    await waitFor(() => redis.status === 'ready', { message: 'the connection' });
  });

  afterEach(async () => {
    await redis.del(ctx.keys.tenants());
    await redis.quit();
  });

  it('notes a tenant once per connection, and again after a reconnect (a restarted Redis may have lost it)', async () => {
    const sadd = jest.spyOn(redis, 'sadd');
    await ctx.noteTenant('acme');
    await ctx.noteTenant('acme');
    expect(sadd).toHaveBeenCalledTimes(1);

    // The write is lost with the Redis that held it; the connection comes back to one without it.
    await redis.srem(ctx.keys.tenants(), 'acme');
    const readyAgain = new Promise<void>((resolve) => redis.once('ready', () => resolve()));
    redis.disconnect(true);
    await readyAgain;
    await ctx.noteTenant('acme');
    expect(sadd).toHaveBeenCalledTimes(2);
    expect(await redis.sismember(ctx.keys.tenants(), 'acme')).toBe(1);
  });
});
