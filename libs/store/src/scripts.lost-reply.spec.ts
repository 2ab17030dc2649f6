import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { createRedis, ReplyLostError } from '@parley/platform';
import { ReplyDroppingProxy } from '../../../test/support/reply-dropping-proxy';
import { startRedisServer, type RedisServer } from '../../../test/support/redis-server';
import { waitFor } from '../../../test/support/wait-for';
import { ParleyStore } from './store';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const TENANT = 'acme';

/** The store's scripts over a connection whose reply to one command can be lost after Redis ran it. */
describe('a script call whose reply a dropped connection lost', () => {
  const prefix = `lost-${randomUUID()}`;
  let proxy: ReplyDroppingProxy;
  let redis: Redis;
  let admin: Redis;
  let store: ParleyStore;

  beforeAll(async () => {
    proxy = await ReplyDroppingProxy.start(REDIS_URL);
    redis = createRedis(proxy.url);
    admin = new Redis(REDIS_URL);
    store = new ParleyStore(redis, { prefix, eventsMaxLen: 1000, retentionSecs: 3600, leaseMs: 2000 });
  });

  afterAll(async () => {
    redis.disconnect();
    await proxy.close();
    const keys = await admin.keys(`${prefix}:*`);
    if (keys.length > 0) {
      await admin.unlink(...keys);
    }
    await admin.quit();
  });

  async function heldRun(): Promise<{ runId: string; token: string }> {
    const runId = randomUUID();
    const token = randomUUID();
    expect(await store.runs.create({ tenant: TENANT, runId, owner: 'alice', agent: 'demo', task: 't', trigger: 'api' })).toEqual({ created: true, wake: 0 });
    expect(await store.runs.acquire(TENANT, runId, 'alice', token)).toMatchObject({ status: 'acquired' });
    return { runId, token };
  }

  it('that changes a run fails with ReplyLostError, having run once: a model turn is in the log once', async () => {
    const { runId, token } = await heldRun();
    const cut = proxy.dropReplyTo('a turn whose reply is lost');
    const appended = store.runs.append(
      { tenant: TENANT, runId, owner: 'alice', token },
      { type: 'assistant', text: 'a turn whose reply is lost', toolCalls: [], at: new Date().toISOString() },
      [{ type: 'message', data: { text: 'a turn whose reply is lost' } }],
    );
    await expect(appended).rejects.toBeInstanceOf(ReplyLostError);
    await cut;
    const log = await store.runs.readLog(TENANT, runId);
    expect(log.filter((entry) => entry.type === 'assistant')).toHaveLength(1);
    expect((await store.events.readRun(TENANT, runId, 0, 100)).filter((event) => event.type === 'message')).toHaveLength(1);
  });

  it('that only reads is sent again and answers', async () => {
    const { runId } = await heldRun();
    const cut = proxy.dropReplyTo(runId);
    const events = await store.events.readRun(TENANT, runId, 0, 100);
    await cut;
    expect(events.map((event) => event.type)).toEqual(['run.created', 'run.status', 'run.status']);
  });
});

/** The same over a connection with a command timeout (the gateway's), to a Redis that stops answering. */
describe('a script call unanswered past the command timeout', () => {
  const prefix = `stall-${randomUUID()}`;
  let server: RedisServer;
  let redis: Redis;
  let admin: Redis;
  let store: ParleyStore;

  beforeAll(async () => {
    server = await startRedisServer();
    redis = createRedis(server.url, 'command', { commandTimeout: 200 });
    admin = new Redis(server.url);
    store = new ParleyStore(redis, { prefix, eventsMaxLen: 1000, retentionSecs: 3600, leaseMs: 2000 });
  });

  afterAll(async () => {
    redis.disconnect();
    admin.disconnect();
    await server.destroy();
  });

  it('fails with ReplyLostError, since Redis runs it once it answers again: the run is created once', async () => {
    const runId = randomUUID();
    // Noted before, so that the script is the first command the pause holds.
    await store.ctx.noteTenant(TENANT);
    await admin.call('CLIENT', 'PAUSE', '1500', 'ALL');
    await expect(store.runs.create({ tenant: TENANT, runId, owner: 'alice', agent: 'demo', task: 't', trigger: 'api' })).rejects.toBeInstanceOf(ReplyLostError);
    // A read unanswered as long is a plain timeout (ioredis'), not a lost script reply.
    await expect(store.runs.get(TENANT, runId)).rejects.toThrow('Command timed out');
    await waitFor(async () => (await admin.exists(store.ctx.keys.run(TENANT, runId))) === 1, { message: 'Redis to run the create once it answers' });
  });
});
