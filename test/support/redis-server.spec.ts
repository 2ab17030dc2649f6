import { Redis } from 'ioredis';
import { pingPort } from '../../scripts/redis-process';
import { startRedisServer, type RedisServer } from './redis-server';
import { waitFor } from './wait-for';

async function withClient<T>(url: string, use: (client: Redis) => Promise<T>): Promise<T> {
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    return await use(client);
  } finally {
    client.disconnect();
  }
}

describe('startRedisServer', () => {
  const servers: RedisServer[] = [];
  const start = async (options: Parameters<typeof startRedisServer>[0]): Promise<RedisServer> => {
    const server = await startRedisServer(options);
    servers.push(server);
    return server;
  };
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.destroy()));
  });

  it('keeps data written with appendfsync always across kill -9 and restart, on the same port', async () => {
    const server = await start({ appendonly: true, appendfsync: 'always' });
    await withClient(server.url, (c) => c.set('k', 'survives'));
    const firstPid = server.pid;

    await server.kill9();
    await server.restart();

    expect(server.pid).not.toBe(firstPid);
    expect(await withClient(server.url, (c) => c.get('k'))).toBe('survives');
  });

  it('keeps everysec data across a graceful stop, which flushes the AOF', async () => {
    const server = await start({ appendonly: true, appendfsync: 'everysec' });
    await withClient(server.url, (c) => c.set('k', 'flushed'));

    await server.stop();
    await server.restart();

    expect(await withClient(server.url, (c) => c.get('k'))).toBe('flushed');
  });

  it('loses everything on restart without AOF, so restart really is a new process', async () => {
    const server = await start({});
    await withClient(server.url, (c) => c.set('k', 'gone'));

    await server.kill9();
    expect(await pingPort(server.port)).toBe(false);
    await server.restart();

    expect(await withClient(server.url, (c) => c.get('k'))).toBeNull();
  });
});

describe('waitFor', () => {
  it('returns the first truthy value', async () => {
    let calls = 0;
    await expect(waitFor(() => (++calls >= 3 ? `done after ${calls}` : undefined))).resolves.toBe('done after 3');
  });

  it('names the awaited thing and the last value on timeout', async () => {
    await expect(waitFor(() => 0, { timeoutMs: 50, intervalMs: 5, message: 'counter to rise' })).rejects.toThrow(
      /timed out after 50 ms: counter to rise; last value: 0/,
    );
  });

  it('reports the last error when the condition keeps throwing', async () => {
    const failing = (): Promise<boolean> => Promise.reject(new Error('connection refused'));
    await expect(waitFor(failing, { timeoutMs: 50 })).rejects.toThrow(/last error: connection refused/);
  });
});
