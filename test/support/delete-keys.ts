import type { Redis } from 'ioredis';

/** Deletes every key matching `pattern` (a test's own prefix), a page at a time: never FLUSHDB on the shared Redis. */
export async function deleteKeys(redis: Redis, pattern: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) {
      await redis.unlink(...keys);
    }
  } while (cursor !== '0');
}
