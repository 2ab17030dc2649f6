import { ParleyQueues } from '@parley/store';
import type { TestStack } from './stack';
import { waitFor } from './wait-for';

/** Every key of a stack's deployment, by name: its type, full content, and whether it has a TTL. */
export type RedisSnapshot = Record<string, string>;

export async function snapshotRedis(stack: TestStack): Promise<RedisSnapshot> {
  const redis = stack.redis;
  const out: RedisSnapshot = {};
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${stack.config.prefix}:*`, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      // BullMQ's stalled-job checker rewrites this marker on a timer; it is no state of Parley's.
      if (key.endsWith(':stalled-check')) {
        continue;
      }
      const type = await redis.type(key);
      let content: unknown;
      switch (type) {
        case 'string':
          content = await redis.get(key);
          break;
        case 'hash':
          content = await redis.hgetall(key);
          break;
        case 'list':
          content = await redis.lrange(key, 0, -1);
          break;
        case 'zset':
          content = await redis.zrange(key, '0', '-1', 'WITHSCORES');
          break;
        case 'set':
          content = (await redis.smembers(key)).sort();
          break;
        case 'stream':
          content = [await redis.xlen(key), await redis.xrange(key, '-', '+')];
          break;
        default:
          content = null;
      }
      const ttl = await redis.pttl(key);
      out[key] = JSON.stringify({ type, ttl: ttl >= 0 ? 'set' : ttl, content });
    }
  } while (cursor !== '0');
  return out;
}

/** Waits until no job is pending or running and two snapshots in a row agree; returns the last. */
export async function settledSnapshot(stack: TestStack): Promise<RedisSnapshot> {
  const queues = stack.gateway!.get(ParleyQueues);
  let previous = '';
  const settled = await waitFor(
    async () => {
      const counts = await Promise.all([
        queues.runs.getJobCounts('active', 'wait', 'delayed', 'prioritized'),
        // Deadline timers wait as delayed jobs by design.
        queues.deadlines.getJobCounts('active', 'wait', 'prioritized'),
      ]);
      if (counts.some((c) => Object.values(c).some((n) => n > 0))) {
        previous = '';
        return undefined;
      }
      const snap = await snapshotRedis(stack);
      const json = JSON.stringify(snap);
      const stable = json === previous;
      previous = json;
      return stable ? snap : undefined;
    },
    { timeoutMs: 20_000, intervalMs: 100, message: 'the stack to settle' },
  );
  return settled!;
}
