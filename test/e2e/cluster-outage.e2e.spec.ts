/**
 * A Redis Cluster that goes away entirely: the gateway answers 503 `unavailable` within its bound
 * instead of holding every request (or socket.io message) until the cluster is back (ioredis queues a
 * cluster's commands for as long as it reconnects), and says that nothing was done.
 */
import { STORE_WAIT_MS } from '../../apps/gateway/src/http/store-ready.guard';
import { askerAgent } from '../support/agents';
import { startRedisCluster, type RedisCluster } from '../support/redis-cluster';
import { TestStack, writeAgents } from '../support/stack';

describe('a Redis Cluster whose every node is down', () => {
  let cluster: RedisCluster;
  let stack: TestStack;

  beforeAll(async () => {
    cluster = await startRedisCluster(3);
    stack = await TestStack.start({
      agentsDir: writeAgents([askerAgent('asker')]),
      overrides: { redisUrl: `redis://${cluster.nodes[0]}`, redisClusterNodes: cluster.nodes, shutdownGraceMs: 500 },
    });
  }, 60_000);

  afterAll(async () => {
    // Not stack.close(): it would clean its keys up on a cluster that is gone.
    await stack?.stopAll();
    stack?.redis.disconnect();
    await cluster?.destroy();
  });

  it('gets 503 with Retry-After at once for reads and writes, nothing applied; liveness still answers', async () => {
    expect((await stack.http('GET', '/v1/runs')).status).toBe(200);
    const client = await stack.connect(stack.token({ sub: 'root', role: 'admin' }));
    await cluster.destroy();
    for (const [method, path, body] of [
      ['GET', '/v1/runs', undefined],
      ['POST', '/v1/runs', { agent: 'asker', task: 'during the outage' }],
    ] as const) {
      const started = Date.now();
      const refused = await stack.request(method, path, body);
      expect({ status: refused.status, body: refused.body, retryAfter: refused.headers.get('retry-after') }).toEqual({
        status: 503,
        body: { error: { code: 'unavailable', message: expect.stringContaining('try again') } },
        retryAfter: '2',
      });
      // Its wait for the store, and no more (the bound is loose: a loaded machine is slow, not hung).
      expect(Date.now() - started).toBeLessThan(STORE_WAIT_MS + 5000);
    }
    // A socket.io message is refused the same way, in its acknowledgement.
    const started = Date.now();
    for (const [message, body] of [
      ['approvals', {}],
      ['subscribe', {}],
    ] as const) {
      expect(await client.socket.timeout(10_000).emitWithAck(message, body)).toEqual({ error: { code: 'unavailable', message: expect.stringContaining('try again') } });
    }
    expect(Date.now() - started).toBeLessThan(STORE_WAIT_MS + 5000);
    client.close();
    expect((await stack.http('GET', '/health/live', undefined, null)).status).toBe(200);
    expect((await stack.http('GET', '/healthz', undefined, null)).status).toBe(503);
  }, 30_000);
});
