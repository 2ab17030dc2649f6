/**
 * A tenant's slot moving between masters (what `redis-cli --cluster reshard` does, one key at a
 * time): commands sent together must each read their key where it is at that moment.
 */
import { Redis } from 'ioredis';
import { createRedis, type RedisClient } from '@parley/platform';
import { startRedisCluster, type RedisCluster } from '../support/redis-cluster';

describe('a Redis Cluster moving a slot', () => {
  let cluster: RedisCluster;
  let client: RedisClient | undefined;
  const direct: Redis[] = [];

  beforeAll(async () => {
    cluster = await startRedisCluster(3);
  }, 60_000);

  afterAll(async () => {
    client?.disconnect();
    direct.forEach((redis) => redis.disconnect());
    await cluster?.destroy();
  });

  const node = (hostPort: string): Redis => {
    const [host, port] = hostPort.split(':');
    const redis = new Redis({ host, port: Number(port) });
    direct.push(redis);
    return redis;
  };

  it("reads each key of one tick where it is, the moved and the not yet moved, through a command connection", async () => {
    client = createRedis({ redisUrl: `redis://${cluster.nodes[0]}`, redisClusterNodes: cluster.nodes }, 'command');
    const [moved, staying] = ['{t:acme}:run:moved', '{t:acme}:run:staying'];
    await client.set(moved, 'moved value');
    await client.set(staying, 'staying value');
    const slot = Number(await (client as Redis).cluster('KEYSLOT', moved));

    // Who holds the slot, and one master that does not.
    const masters = cluster.nodes.map(node);
    const ids = await Promise.all(masters.map(async (redis) => String(await redis.cluster('MYID'))));
    const holders = await Promise.all(masters.map((redis) => redis.cluster('COUNTKEYSINSLOT', slot)));
    const from = holders.findIndex((count) => count > 0);
    const to = (from + 1) % masters.length;
    const [toHost, toPort] = cluster.nodes[to].split(':');

    // Half-way through the move: one key is on the importing master, the other still on the source.
    await masters[to].cluster('SETSLOT', slot, 'IMPORTING', ids[from]);
    await masters[from].cluster('SETSLOT', slot, 'MIGRATING', ids[to]);
    await masters[from].migrate(toHost, toPort, moved, 0, 5000);

    for (let round = 0; round < 20; round++) {
      expect(await Promise.all([client.get(moved), client.get(staying)])).toEqual(['moved value', 'staying value']);
    }
  }, 60_000);
});
