import { Redis, type RedisOptions } from 'ioredis';

/**
 * One place that opens Redis connections. BullMQ workers need `maxRetriesPerRequest: null`;
 * request/response clients keep a bound so a dead Redis surfaces as an error, not a hang.
 */
export function createRedis(url: string, kind: 'command' | 'blocking' = 'command', extra: RedisOptions = {}): Redis {
  return new Redis(url, {
    maxRetriesPerRequest: kind === 'blocking' ? null : 3,
    enableAutoPipelining: kind === 'command',
    lazyConnect: false,
    ...extra,
  });
}
