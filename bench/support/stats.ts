import type { Redis } from 'ioredis';

/** Nearest-rank percentile of `values` (ms), `p` in 0..100. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) {
    return Number.NaN;
  }
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1];
}

export interface Latency {
  count: number;
  p50: number;
  p99: number;
  mean: number;
}

export function summarize(values: number[]): Latency {
  return {
    count: values.length,
    p50: percentile(values, 50),
    p99: percentile(values, 99),
    mean: values.reduce((a, b) => a + b, 0) / Math.max(1, values.length),
  };
}

export function nowMs(): number {
  return performance.now();
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Runs `task` over `items` with at most `limit` in flight. */
export async function pool<T>(items: T[], limit: number, task: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      await task(items[index], index);
    }
  });
  await Promise.all(lanes);
}

/** Every key under `prefix:` (SCAN, never KEYS). */
export async function scanKeys(redis: Redis, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  return keys;
}

/** Deletes every key under `prefix:` (this benchmark's own; never FLUSHDB on the shared server). */
export async function deletePrefix(redis: Redis, prefix: string): Promise<void> {
  const keys = await scanKeys(redis, prefix);
  for (let i = 0; i < keys.length; i += 500) {
    await redis.unlink(...keys.slice(i, i + 500));
  }
}

/** MEMORY USAGE (all samples) of each key, pipelined. */
export async function memoryOf(redis: Redis, keys: string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (let i = 0; i < keys.length; i += 500) {
    const slice = keys.slice(i, i + 500);
    const pipeline = redis.pipeline();
    slice.forEach((key) => pipeline.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));
    const replies = (await pipeline.exec()) ?? [];
    replies.forEach(([error, bytes], j) => {
      if (!error && typeof bytes === 'number') {
        out.set(slice[j], bytes);
      }
    });
  }
  return out;
}
