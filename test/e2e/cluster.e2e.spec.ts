/**
 * Parley on a real 3-master Redis Cluster that this file starts (and removes): the multi-process
 * scenario (separate OS processes), proof that a run's keys share one slot and that BullMQ runs
 * there, and the in-process stack (start, question, answer, finish, tenant limits, webhooks of two
 * tenants) in cluster mode.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Queue } from 'bullmq';
import { QUEUES } from '@parley/contracts';
import { createRedis, type RedisClient } from '@parley/platform';
import { RedisKeys, hgetallEach, lowestScoreEach, zaddEach } from '@parley/store';
import { describeMultiProcess } from '../harness/multi-process.scenario';
import { askerAgent, quickAgent } from '../support/agents';
import { startRedisCluster, type RedisCluster } from '../support/redis-cluster';
import { TestStack, writeAgents } from '../support/stack';
import { waitFor } from '../support/wait-for';

let cluster: RedisCluster;

beforeAll(async () => {
  cluster = await startRedisCluster(3);
}, 60_000);

afterAll(async () => {
  await cluster?.destroy();
});

const slotOf = async (redis: RedisClient, key: string): Promise<number> => Number(await redis.cluster('KEYSLOT', key));

describeMultiProcess('cluster: 2 gateways, 3 loop-workers, 2 interaction-services on a 3-master Redis Cluster', {
  name: 'cluster',
  redis: () => ({ redisUrl: `redis://${cluster.nodes[0]}`, redisClusterNodes: cluster.nodes }),
  more: (harness) => {
    it('every key of a finished run and of its interactions is in the tenant slot; the queues are in their own slot and processed jobs', async () => {
      const h = harness();
      const k = h.keys;
      const runIds = await h.redis.zrange(k.runIndex(h.tenant), '0', '-1');
      const statuses = await Promise.all(runIds.map(async (id) => (await h.runHash(id)).status));
      const runId = runIds[statuses.indexOf('finished')];
      expect(runId).toBeDefined();

      const log = (await h.redis.lrange(k.runLog(h.tenant, runId), 0, -1)).map((line) => JSON.parse(line) as { type: string; interactionId?: string });
      const interactionKeys = log.flatMap((entry) => (entry.type === 'question' ? [k.interaction(h.tenant, entry.interactionId!)] : []));
      expect(interactionKeys.length).toBeGreaterThan(0);
      const keys = [
        k.run(h.tenant, runId),
        k.runLog(h.tenant, runId),
        k.runEventSeqs(h.tenant, runId),
        ...interactionKeys,
        k.seq(h.tenant),
        k.tenantEvents(h.tenant),
        k.runIndex(h.tenant),
        k.gauges(h.tenant),
      ];
      for (const key of keys) {
        expect({ key, exists: await h.redis.exists(key) }).toEqual({ key, exists: 1 });
      }
      const slots = await Promise.all(keys.map((key) => slotOf(h.redis, key)));
      expect(new Set(slots).size).toBe(1);
      expect(slots[0]).toBe(await slotOf(h.redis, `t:${h.tenant}`));

      const prefix = k.bullPrefix();
      expect(prefix).toBe(`${h.prefix}:{${h.prefix}:bull}`);
      const queueSlot = await slotOf(h.redis, `${h.prefix}:bull`);
      for (const name of [QUEUES.runs, QUEUES.deadlines]) {
        expect(await slotOf(h.redis, `${prefix}:${name}:meta`)).toBe(queueSlot);
      }
      const runs = new Queue(QUEUES.runs, { connection: h.redis, prefix });
      try {
        const runCounts = await runs.getJobCounts('completed', 'failed');
        expect(runCounts.completed).toBeGreaterThan(runIds.length);
        expect(runCounts.failed).toBe(0);
      } finally {
        await runs.close();
      }
    });
  },
});

/** Records the bodies POSTed to it. */
class Receiver {
  readonly bodies: Array<{ type: string; tenant: string; runId: string }> = [];
  private server?: Server;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((request, response) => {
      let raw = '';
      request.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
      request.on('end', () => {
        this.bodies.push(JSON.parse(raw));
        response.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
    return this;
  }

  close(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

describe('cluster: the in-process stack', () => {
  let stack: TestStack;
  let receiver: Receiver;
  let redis: RedisClient;

  beforeAll(async () => {
    receiver = await new Receiver().start();
    stack = await TestStack.start({
      agentsDir: writeAgents([askerAgent('asker'), quickAgent('quick')]),
      overrides: {
        redisUrl: `redis://${cluster.nodes[0]}`,
        redisClusterNodes: cluster.nodes,
        // One live run per tenant: a second start must read the first run's hash (admit-run).
        limitConcurrentRuns: 1,
        webhookAllowPrivate: true,
        webhookClaimIdleMs: 1000,
      },
    });
    redis = createRedis(stack.config);
  });

  afterAll(async () => {
    // Not stack.close(): its key sweep is for a single Redis; the cluster goes away with this file.
    await stack?.stopAll();
    stack?.redis.disconnect();
    redis?.disconnect();
    await receiver?.close();
  });

  it('a run starts, asks, is answered and finishes; it leaves the active runs as it ends, so the next start is admitted', async () => {
    const client = await stack.connect();
    try {
      await client.subscribe({ since: 0 });
      const runId = await stack.startRun('asker');
      const interaction = await stack.waitForQuestion(runId);
      expect((await stack.answer(interaction.id, { text: 'on a cluster' })).status).toBe(200);
      const done = await stack.waitForStatus(runId, 'finished');
      expect(done.run.summary).toBe('got: on a cluster');
      await client.waitForEvent((e) => e.type === 'run.finished' && e.runId === runId, 'run.finished on the socket');

      // The limit is 1: the ended run left the active runs in end-run (an undeclared, same-slot key), so the next is admitted.
      const keys = new RedisKeys(stack.config.prefix, { cluster: true });
      expect(await redis.zrange(keys.activeRuns('acme'), '0', '-1')).toEqual([]);
      const next = await stack.startRun('quick');
      await stack.waitForStatus(next, 'finished');
      expect(await redis.zrange(keys.activeRuns('acme'), '0', '-1')).toEqual([]);
    } finally {
      client.close();
    }
  });

  it('keyed starts sent at once make one run (the starting mark is a key of the tenant slot)', async () => {
    const start = () =>
      fetch(`${stack.url}/v1/runs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${stack.token()}`, 'content-type': 'application/json', 'idempotency-key': 'cluster-once' },
        body: JSON.stringify({ agent: 'quick', task: 'once on a cluster' }),
      }).then(async (response) => ({ status: response.status, id: ((await response.json()) as { run?: { id: string } }).run?.id }));
    const starts = await Promise.all(Array.from({ length: 4 }, start));
    expect(starts).toEqual(starts.map(() => ({ status: 201, id: starts[0].id })));
    await stack.waitForStatus(starts[0].id!, 'finished');
  });

  it('a command over keys of many slots (gauges, socket slots of every tenant) runs on each node and answers in order', async () => {
    const keys = new RedisKeys(`${stack.config.prefix}-many`, { cluster: true });
    const tenants = Array.from({ length: 12 }, (_, i) => `tenant${i}`);
    const slots = new Set(await Promise.all(tenants.map((tenant) => slotOf(redis, keys.gauges(tenant)))));
    expect(slots.size).toBeGreaterThan(3);
    await zaddEach(
      redis,
      tenants.map((tenant, i) => ({ key: keys.tenantSockets(tenant), pairs: [i, `socket-of-${tenant}`] })),
    );
    for (const [i, tenant] of tenants.entries()) {
      await redis.hset(keys.gauges(tenant), 'parked', String(i));
    }
    const hashes = await hgetallEach(
      redis,
      tenants.map((tenant) => keys.gauges(tenant)),
    );
    expect(hashes).toEqual(tenants.map((_, i) => ({ parked: String(i) })));
    for (const [i, tenant] of tenants.entries()) {
      expect(await redis.zrange(keys.tenantSockets(tenant), '0', '-1', 'WITHSCORES')).toEqual([`socket-of-${tenant}`, String(i)]);
    }    // The lowest score of each, a missing key's as null, a hash's read as its own error.
    const lowest = await lowestScoreEach(redis, [...tenants.map((tenant) => keys.tenantSockets(tenant)), keys.tenantSockets('nobody'), keys.gauges(tenants[0])]);
    expect(lowest.slice(0, tenants.length + 1)).toEqual([...tenants.map((_, i) => i), null]);
    expect(String(lowest.at(-1))).toMatch(/WRONGTYPE/);
  });

  it("webhooks of two tenants (streams on different slots) get their own tenant's events", async () => {
    const tenants = ['acme', 'globex'];
    const slots = await Promise.all(tenants.map((tenant) => slotOf(redis, new RedisKeys(stack.config.prefix).tenantEvents(tenant))));
    expect(slots[0]).not.toBe(slots[1]);
    for (const tenant of tenants) {
      const res = await stack.http('POST', '/v1/webhooks', { url: receiver.url, events: ['run.finished'] }, stack.token({ tenant, sub: 'root', role: 'admin' }));
      expect(res.status).toBe(201);
    }
    const runs = await Promise.all(tenants.map((tenant) => stack.startRun('quick', `for ${tenant}`, stack.token({ tenant }))));
    await waitFor(() => runs.every((runId) => receiver.bodies.some((b) => b.runId === runId)), {
      timeoutMs: 20_000,
      message: 'run.finished of both tenants at the receiver',
    });
    const bodies = receiver.bodies;
    expect(runs.map((runId) => bodies.filter((b) => b.runId === runId).map((b) => [b.type, b.tenant]))).toEqual([[['run.finished', 'acme']], [['run.finished', 'globex']]]);
  });
});
