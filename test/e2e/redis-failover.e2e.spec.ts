/**
 * A Redis with a replica failing over behind one address (a managed Redis's primary endpoint, or a
 * DNS name moved to the new primary). The connections already open stay with the old primary, now
 * a replica: it refuses their writes (READONLY) and unblocks their blocking reads (UNBLOCKED) for
 * as long as they stay open. Each connection reconnects on those replies, reaching the new primary,
 * and sends the refused command again; so requests are served and parked runs resume.
 */
import { Redis } from 'ioredis';
import { askerAgent } from '../support/agents';
import { EndpointProxy } from '../support/endpoint-proxy';
import { startRedisServer, type RedisServer } from '../support/redis-server';
import { TestStack, writeAgents } from '../support/stack';
import { waitFor } from '../support/wait-for';

describe('a Redis failing over to its replica behind one address', () => {
  let primary: RedisServer;
  let replica: RedisServer;
  let endpoint: EndpointProxy;
  let stack: TestStack;
  const admins: Redis[] = [];

  beforeAll(async () => {
    [primary, replica] = await Promise.all([startRedisServer(), startRedisServer()]);
    admins.push(new Redis(primary.url), new Redis(replica.url));
    await admins[1].call('REPLICAOF', '127.0.0.1', String(primary.port));
    endpoint = await EndpointProxy.start(primary.url);
    stack = await TestStack.start({ agentsDir: writeAgents([askerAgent('asker')]), overrides: { redisUrl: endpoint.url } });
  });

  afterAll(async () => {
    await stack?.close();
    await endpoint?.close();
    admins.forEach((admin) => admin.disconnect());
    await Promise.all([primary?.destroy(), replica?.destroy()]);
  });

  it('serves on the new primary, and a run parked before the failover resumes on its answer', async () => {
    const runId = await stack.startRun('asker', 'before the failover');
    const question = await stack.waitForQuestion(runId);
    // Everything written so far is on the replica.
    expect(await admins[0].call('WAIT', '1', '10000')).toBe(1);

    const [oldPrimary, newPrimary] = admins;
    await newPrimary.call('REPLICAOF', 'NO', 'ONE');
    endpoint.pointAt(replica.url);
    await oldPrimary.call('REPLICAOF', '127.0.0.1', String(replica.port));
    await waitFor(async () => (await oldPrimary.info('replication')).includes('master_link_status:up'), { message: 'the old primary to follow the new one' });
    // The test's own connection (it cleans up the keys) is a plain one: it is moved by hand.
    stack.redis.disconnect(true);

    // The first answer may meet a connection that has not yet learned of the failover: it is sent again.
    const answered = await stack.answer(question.id, { text: 'blue' });
    expect(answered.status).toBe(200);
    expect((await stack.waitForStatus(runId, 'finished')).run.summary).toBe('got: blue');
    expect(await newPrimary.hget(`${stack.config.prefix}:{t:acme}:run:${runId}`, 'status')).toBe('finished');
    // New runs start and park as before.
    await stack.waitForQuestion(await stack.startRun('asker', 'after the failover'));
  });
});
