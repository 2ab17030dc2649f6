import { connect, createServer as createTcpServer, type AddressInfo, type Socket as TcpSocket } from 'node:net';
import type { Redis } from 'ioredis';
import { createRedis } from '../redis';
import { batchWritesPerTick } from './write-batching';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `parley-spec-write-batching-${process.pid}`;

/** Counts the system calls a socket's writes make (one per `_write` or `_writev`). */
function countWrites(tcp: TcpSocket): { count: number } {
  const counter = { count: 0 };
  const stream = tcp as unknown as { _write: (...args: unknown[]) => void; _writev: (...args: unknown[]) => void };
  const write = stream._write.bind(tcp);
  const writev = stream._writev.bind(tcp);
  stream._write = (...args) => {
    counter.count++;
    write(...args);
  };
  stream._writev = (...args) => {
    counter.count++;
    writev(...args);
  };
  return counter;
}

describe('writes to a TCP connection', () => {
  it('of one tick go out as one system call; those of later ticks after them, in order', async () => {
    const chunks: Buffer[] = [];
    let writes: { count: number } | undefined;
    let afterOneTick: number | undefined;
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
      });
    });
    expect(Buffer.concat(chunks).toString()).toBe([...Array(102).keys()].join(','));
    expect(afterOneTick).toBe(1);
    expect(writes!.count).toBe(2);
  });
});

describe('a stream written and closed in the same tick', () => {
  /** What the peer of a batched connection receives when `act` writes to it and closes it. */
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

  it('sends everything before it ends', async () => {
    expect(
      await received((tcp) => {
        tcp.write('a');
        tcp.write('b');
        tcp.end('c');
      }),
    ).toBe('abc');
  });

  it('sends what was written before it is destroyed (a refused websocket upgrade gets its 400)', async () => {
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
