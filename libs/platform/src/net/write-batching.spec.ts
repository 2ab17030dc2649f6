import { connect, createServer as createTcpServer, type AddressInfo, type Socket as TcpSocket } from 'node:net';
import type { Redis } from 'ioredis';
import { countWrites } from '../../../../test/support/count-writes';
import { createRedis } from '../redis';
import { batchWritesPerTick } from './write-batching';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `parley-spec-write-batching-${process.pid}`;

/** What the peer of a batched TCP connection receives while `act` writes to it and closes it. */
async function received(act: (tcp: TcpSocket) => void): Promise<string> {
  const chunks: Buffer[] = [];
  await new Promise<void>((resolve) => {
    const server = createTcpServer((peer) => {
      peer.on('data', (chunk: Buffer) => chunks.push(chunk));
      peer.on('close', () => {
        server.close();
        resolve();
      });
    }).listen(0, '127.0.0.1', () => {
      const tcp = connect((server.address() as AddressInfo).port, '127.0.0.1', () => {
        batchWritesPerTick(tcp);
        batchWritesPerTick(tcp);
        act(tcp);
      });
    });
  });
  return Buffer.concat(chunks).toString();
}

describe('writes to a TCP connection', () => {
  it('of one tick go out as one system call; those of later ticks after them, in order', async () => {
    let writes: { count: number } | undefined;
    let afterOneTick: number | undefined;
    const text = await received((tcp) => {
      writes = countWrites(tcp);
      for (let n = 0; n < 100; n++) {
        tcp.write(`${n},`);
      }
      process.nextTick(() => {
        afterOneTick = writes!.count;
        setImmediate(() => {
          tcp.write('100,');
          tcp.end('101');
        });
      });
    });
    expect(text).toBe([...Array(102).keys()].join(','));
    expect(afterOneTick).toBe(1);
    expect(writes!.count).toBe(2);
  });

  it('written and ended in the same tick are all sent before the end', async () => {
    expect(
      await received((tcp) => {
        tcp.write('a');
        tcp.write('b');
        tcp.end('c');
      }),
    ).toBe('abc');
  });

  it('written before a destroy in the same tick are sent (a refused websocket upgrade gets its 400)', async () => {
    expect(
      await received((tcp) => {
        tcp.write('HTTP/1.1 400 Bad Request\r\n\r\n');
        tcp.destroy();
      }),
    ).toBe('HTTP/1.1 400 Bad Request\r\n\r\n');
  });
});

describe('Redis connections', () => {
  let redis: Redis;

  beforeEach(() => {
    redis = createRedis(REDIS_URL);
  });

  afterEach(async () => {
    const keys = await redis.keys(`${PREFIX}:*`);
    if (keys.length > 0) {
      await redis.del(...keys);
    }
    await redis.quit();
  });

  async function commandsOfOneTick(client: Redis, count: number): Promise<{ replies: unknown[]; writes: number }> {
    await client.ping();
    const writes = countWrites(client.stream);
    const replies = await Promise.all(Array.from({ length: count }, (_, i) => client.incrby(`${PREFIX}:n`, i)));
    return { replies, writes: writes.count };
  }

  it('send the commands of one tick as one write, each answered in order', async () => {
    const { replies, writes } = await commandsOfOneTick(redis, 100);
    expect(writes).toBe(1);
    expect(replies).toEqual(Array.from({ length: 100 }, (_, i) => (i * (i + 1)) / 2));
  });

  it('leave a Sentinel setup to ioredis (a connector would connect past the sentinels)', () => {
    const sentinel = createRedis(REDIS_URL, 'command', { sentinels: [{ host: '127.0.0.1', port: 1 }], name: 'main', lazyConnect: true });
    expect(sentinel.options.Connector).toBeUndefined();
    sentinel.disconnect();
  });

  it('batch again after a reconnection, and in duplicates', async () => {
    await redis.ping();
    const before = redis.stream;
    const reconnected = new Promise<void>((resolve) => redis.once('ready', () => resolve()));
    redis.disconnect(true);
    await reconnected;
    expect(redis.stream).not.toBe(before);
    expect((await commandsOfOneTick(redis, 20)).writes).toBe(1);

    const copy = redis.duplicate();
    try {
      expect((await commandsOfOneTick(copy, 20)).writes).toBe(1);
    } finally {
      await copy.quit();
    }
  });
});
