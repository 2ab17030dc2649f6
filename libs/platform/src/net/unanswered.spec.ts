import { Redis } from 'ioredis';
import { ReplyDroppingProxy } from '../../../../test/support/reply-dropping-proxy';
import { createRedis } from '../redis';
import { ReplyLostError } from './unanswered';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const KEY = `parley-spec-unanswered-${process.pid}`;

describe('a command whose reply a dropped connection lost', () => {
  let proxy: ReplyDroppingProxy;
  let direct: Redis;
  let redis: Redis;

  beforeEach(async () => {
    proxy = await ReplyDroppingProxy.start(REDIS_URL);
    direct = new Redis(REDIS_URL);
    redis = createRedis(proxy.url);
    await redis.ping();
  });

  afterEach(async () => {
    redis.disconnect();
    await proxy.close();
    await direct.del(KEY);
    await direct.quit();
  });

  it('is a script: it fails with ReplyLostError, having run once, and the connection goes on', async () => {
    const cut = proxy.dropReplyTo('lost-script');
    const counted = redis.eval("return redis.call('INCR', KEYS[1])", 1, KEY, 'lost-script');
    await expect(counted).rejects.toBeInstanceOf(ReplyLostError);
    await cut;
    expect(await redis.get(KEY)).toBe('1');
    expect(await redis.eval("return redis.call('INCR', KEYS[1])", 1, KEY)).toBe(2);
  });

  it('is a plain command: ioredis sends it again on the next connection', async () => {
    const cut = proxy.dropReplyTo('lost-plain');
    expect(await redis.set(KEY, 'lost-plain')).toBe('OK');
    await cut;
    expect(await direct.get(KEY)).toBe('lost-plain');
  });
});

describe('a script whose reply was lost on a connection that does not reconnect (as a cluster node does not)', () => {
  it('fails with ReplyLostError, not the "Connection is closed." a cluster sends again', async () => {
    const proxy = await ReplyDroppingProxy.start(REDIS_URL);
    const direct = new Redis(REDIS_URL);
    const redis = createRedis(proxy.url, 'command', { retryStrategy: () => null });
    try {
      await redis.ping();
      const cut = proxy.dropReplyTo('lost-on-a-node');
      const counted = redis.eval("return redis.call('INCR', KEYS[1])", 1, KEY, 'lost-on-a-node');
      await expect(counted).rejects.toBeInstanceOf(ReplyLostError);
      await cut;
      expect(await direct.get(KEY)).toBe('1');
    } finally {
      redis.disconnect();
      await proxy.close();
      await direct.del(KEY);
      await direct.quit();
    }
  });
});
