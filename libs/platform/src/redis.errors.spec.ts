import { freePort } from '../../../scripts/ports';
import { waitFor } from '../../../test/support/wait-for';
import { createRedis } from './redis';

describe("a Redis connection's errors", () => {
  it('are logged as one JSON line per outage naming the connection (not printed by ioredis, one per retry)', async () => {
    const printed = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    const lines: string[] = [];
    const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    // Nothing listens there: every connection attempt fails at once, and ioredis retries.
    const redis = createRedis(`redis://127.0.0.1:${await freePort()}`, 'command', { retryStrategy: () => 20, purpose: 'event feed' });
    try {
      // Counted by its retries: an 'error' listener of the test's own would stop ioredis printing anyway.
      let retries = 0;
      redis.on('reconnecting', () => retries++);
      await waitFor(() => retries >= 5, { message: 'five failed connection attempts' });
      const logged = lines.filter((line) => line.includes('Redis connection error')).map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(logged).toEqual([expect.objectContaining({ level: 40, name: 'redis', connection: 'event feed', err: expect.stringContaining('ECONNREFUSED') })]);
      expect(printed).not.toHaveBeenCalled();
    } finally {
      redis.disconnect();
      write.mockRestore();
      printed.mockRestore();
    }
  });
});
