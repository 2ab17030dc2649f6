import type { EventType } from '@parley/contracts';
import { io } from 'socket.io-client';
import { Harness, type HarnessOptions } from '../../test/harness/harness';
import { startRedisServer, type RedisServer } from '../../test/support/redis-server';
import { TestClient } from '../../test/support/stack';

export const QUICK = process.env.BENCH_QUICK === '1';

export function say(line: string): void {
  process.stdout.write(`[bench] ${line}\n`);
}

/**
 * The bench's Redis: a redis-server of its own (no persistence) unless BENCH_REDIS_URL names one.
 * Its own server keeps other people's traffic out of the latency figures, out of INFO
 * commandstats and out of used_memory, and keeps 100,000 parked runs off the shared Redis.
 */
export async function benchRedis(): Promise<{ url: string; pid?: number; close: () => Promise<void> }> {
  if (process.env.BENCH_REDIS_URL) {
    return { url: process.env.BENCH_REDIS_URL, close: () => Promise.resolve() };
  }
  const server: RedisServer = await startRedisServer();
  return { url: server.url, pid: server.pid, close: () => server.destroy() };
}

/** Service environment of every bench harness: tenant limits off (the bench starts thousands of runs), worker concurrency 50. */
export const BENCH_ENV: Record<string, string> = {
  PARLEY_WORKER_CONCURRENCY: '50',
  PARLEY_LIMIT_RUNS_PER_MINUTE: '0',
  PARLEY_LIMIT_RUNS_PER_MINUTE_PER_USER: '0',
  PARLEY_LIMIT_CONCURRENT_RUNS: '0',
  PARLEY_LIMIT_CONCURRENT_RUNS_PER_USER: '0',
  PARLEY_LIMIT_OPEN_INTERACTIONS: '0',
  PARLEY_LIMIT_SOCKETS: '0',
  PARLEY_LIMIT_SOCKETS_PER_USER: '0',
  PARLEY_LIMIT_MESSAGES_PER_MINUTE: '0',
  PARLEY_LIMIT_MESSAGES_PER_MINUTE_PER_USER: '0',
  PARLEY_LIMIT_SUBSCRIBES_PER_MINUTE_PER_SOCKET: '0',
};

/** Parley as separate processes (test/harness) on the bench's Redis; logs at `warn` so per-step log lines cost nothing. */
export function startHarness(redisUrl: string, options: Omit<HarnessOptions, 'redisUrl'>): Promise<Harness> {
  return Harness.start({ logLevel: 'warn', ...options, redisUrl, env: { ...BENCH_ENV, ...options.env } });
}

/** A socket.io client of the bench process on a gateway, subscribed to the tenant's live events (of `types`, or all). */
export async function connectClient(url: string, token: string, types?: readonly EventType[]): Promise<TestClient> {
  const socket = io(`${url}/v1`, { auth: { token }, transports: ['websocket'], reconnection: false, forceNew: true });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('connect_error', (error) => reject(error));
  });
  const client = new TestClient(socket);
  const ack = await client.subscribe(types ? { types: [...types] } : {});
  if (!ack?.ok) {
    throw new Error(`subscribe refused: ${JSON.stringify(ack)}`);
  }
  return client;
}

/** The same limits off, as config overrides of an in-process TestStack. */
export const BENCH_LIMITS_OFF = {
  limitRunsPerMinute: 0,
  limitUserRunsPerMinute: 0,
  limitConcurrentRuns: 0,
  limitUserConcurrentRuns: 0,
  limitOpenInteractions: 0,
  limitSockets: 0,
  limitSocketsPerUser: 0,
  limitMessagesPerMinute: 0,
  limitUserMessagesPerMinute: 0,
};
