import { Cluster } from 'ioredis';
import type { RedisClient } from '@parley/platform';

/*
 * One command over many keys that may sit in different cluster slots (one per tenant), in as few
 * round trips as the connection allows: one pipeline on a single Redis; on a cluster one command
 * per key, which the connection writes together per node (BATCHING_CONNECTOR, not ioredis' auto-pipelining).
 */

/** HGETALL of each key, in order. */
export async function hgetallEach(redis: RedisClient, keys: string[]): Promise<Array<Record<string, string>>> {
  if (redis instanceof Cluster) {
    return Promise.all(keys.map((key) => redis.hgetall(key)));
  }
  const pipeline = redis.pipeline();
  keys.forEach((key) => pipeline.hgetall(key));
  return repliesOf<Record<string, string>>(await pipeline.exec());
}

/** ZADD of score/member pairs to each key. */
export async function zaddEach(redis: RedisClient, adds: Array<{ key: string; pairs: Array<string | number> }>): Promise<void> {
  if (redis instanceof Cluster) {
    await Promise.all(adds.map(({ key, pairs }) => redis.zadd(key, ...pairs)));
    return;
  }
  const pipeline = redis.pipeline();
  adds.forEach(({ key, pairs }) => pipeline.zadd(key, ...pairs));
  repliesOf(await pipeline.exec());
}

/** The lowest score in each sorted set, null for an empty or missing one, or the error its read got (one key's failure is its own). */
export async function lowestScoreEach(redis: RedisClient, keys: string[]): Promise<Array<number | null | Error>> {
  const lowest = (reply: unknown): number | null => {
    const pair = reply as string[];
    return pair.length < 2 ? null : Number(pair[1]);
  };
  if (redis instanceof Cluster) {
    return Promise.all(keys.map((key) => redis.zrange(key, '0', '0', 'WITHSCORES').then(lowest, (error: unknown) => (error instanceof Error ? error : new Error(String(error))))));
  }
  const pipeline = redis.pipeline();
  keys.forEach((key) => pipeline.zrange(key, '0', '0', 'WITHSCORES'));
  return ((await pipeline.exec()) ?? []).map(([error, reply]) => error ?? lowest(reply));
}

/** A pipeline's replies; the first failed command's error is thrown, as one command's would be. */
function repliesOf<T>(replies: Array<[Error | null, unknown]> | null): T[] {
  return (replies ?? []).map(([error, reply]) => {
    if (error) {
      throw error;
    }
    return reply as T;
  });
}
