import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { StoreUnavailableError } from '@parley/contracts';
import { freePort } from '../../../../scripts/ports';
import { startRedisProcess } from '../../../../scripts/redis-process';
import { storeReady } from './store-ready.guard';

describe('waiting for the store', () => {
  it('many waits on a connection that is away share one listener, and each is refused, nothing applied', async () => {
    const redis = new Redis({ port: await freePort(), lazyConnect: false, maxRetriesPerRequest: 1 });
    redis.on('error', () => undefined);
    try {
      const before = redis.listenerCount('ready');
      const waits = Array.from({ length: 20 }, () => storeReady(redis).then(() => 'ready', (error: unknown) => error));
      expect(redis.listenerCount('ready')).toBe(before + 1);
      for (const outcome of await Promise.all(waits)) {
        expect(outcome).toBeInstanceOf(StoreUnavailableError);
        expect((outcome as StoreUnavailableError).notApplied).toBe(true);
      }
    } finally {
      redis.disconnect();
    }
  });

  it('a wait ends as soon as the connection is back', async () => {
    const port = await freePort();
    const redis = new Redis({ port, lazyConnect: false, maxRetriesPerRequest: 1, retryStrategy: () => 50 });
    redis.on('error', () => undefined);
    const waited = storeReady(redis);
    const dir = mkdtempSync(join(tmpdir(), 'parley-store-ready-'));
    const server = await startRedisProcess({ port, dir });
    try {
      await expect(waited).resolves.toBeUndefined();
      expect(redis.status).toBe('ready');
    } finally {
      redis.disconnect();
      await server.kill9();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
