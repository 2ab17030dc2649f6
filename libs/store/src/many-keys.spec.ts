import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { hgetallEach, lowestScoreEach, zaddEach } from './many-keys';

/** Against a real single Redis (the cluster case is in test/e2e/cluster.e2e.spec.ts), keys of its own. */
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('a command over many keys on a single Redis', () => {
  const prefix = `mk-${randomUUID()}`;
  const keys = Array.from({ length: 5 }, (_, i) => `${prefix}:${i}`);
  let redis: Redis;

  beforeAll(() => {
    redis = new Redis(REDIS_URL);
  });

  afterAll(async () => {
    await redis.del(...keys);
    await redis.quit();
  });

  it('goes as one pipeline and answers in order, a missing hash as an empty one', async () => {
    await redis.hset(keys[0], 'parked', '3');
    await redis.hset(keys[2], 'open:question', '1', 'parked', '0');
    const pipelines = jest.spyOn(redis, 'pipeline');
    expect(await hgetallEach(redis, keys.slice(0, 3))).toEqual([{ parked: '3' }, {}, { 'open:question': '1', parked: '0' }]);
    expect(pipelines).toHaveBeenCalledTimes(1);
    expect(await hgetallEach(redis, [])).toEqual([]);
  });

  it('adds to each sorted set, and fails as one command would when a key holds another type', async () => {
    await zaddEach(redis, [
      { key: keys[3], pairs: [1, 'a', 2, 'b'] },
      { key: keys[4], pairs: [5, 'c'] },
    ]);
    expect(await redis.zrange(keys[3], '0', '-1', 'WITHSCORES')).toEqual(['a', '1', 'b', '2']);
    expect(await redis.zrange(keys[4], '0', '-1', 'WITHSCORES')).toEqual(['c', '5']);
    await expect(zaddEach(redis, [{ key: keys[0], pairs: [1, 'x'] }])).rejects.toThrow(/WRONGTYPE/);
  });

  it("reads each sorted set's lowest score in one pipeline: null when empty, the error of one key for that key alone", async () => {
    await redis.zadd(keys[3], 1, 'a', 2, 'b');
    const pipelines = jest.spyOn(redis, 'pipeline');
    pipelines.mockClear();
    const [lowest, wrongType, missing] = await lowestScoreEach(redis, [keys[3], keys[0], `${prefix}:missing`]);
    expect(pipelines).toHaveBeenCalledTimes(1);
    expect(lowest).toBe(1);
    expect(wrongType).toBeInstanceOf(Error);
    expect(String(wrongType)).toMatch(/WRONGTYPE/);
    expect(missing).toBeNull();
  });
});
