import { Redis } from 'ioredis';
import { ParleyStore, RedisKeys } from '@parley/store';
import { keyedId } from '../../apps/gateway/src/runs/keyed-id';
import { askerAgent } from '../support/agents';
import { TestStack, writeAgents } from '../support/stack';
import { waitFor } from '../support/wait-for';

/** Starts with an `Idempotency-Key`: a retry after a lost response finds the run it made. */
describe('a run start with an Idempotency-Key', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.start({ agentsDir: writeAgents([askerAgent()]) });
  });
  afterAll(() => stack.close());

  async function start(key: string | null, body: Record<string, unknown>, token = stack.token()) {
    const response = await fetch(`${stack.url}/v1/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(key === null ? {} : { 'idempotency-key': key }) },
      body: JSON.stringify(body),
    });
    return { status: response.status, replayed: response.headers.get('idempotent-replayed'), body: (await response.json()) as any };
  }
  const runsWithTask = async (task: string, token = stack.token()) =>
    ((await stack.http('GET', '/v1/runs?limit=100', undefined, token)).body.runs as Array<{ id: string; task: string }>).filter((run) => run.task === task).map((run) => run.id);

  it('makes one run however often it is sent; the repeats are answered with that run', async () => {
    const first = await start('order-1042', { agent: 'asker', task: 'once only' });
    expect(first).toMatchObject({ status: 201, replayed: null, body: { run: { task: 'once only' } } });
    const again = await start('order-1042', { agent: 'asker', task: 'once only' });
    expect(again).toMatchObject({ status: 201, replayed: 'true', body: { run: { id: first.body.run.id } } });
    expect(await runsWithTask('once only')).toEqual([first.body.run.id]);
    await stack.waitForQuestion(first.body.run.id);
  });

  it('sent many times at once, makes one run: every start is answered with it', async () => {
    const starts = await Promise.all(Array.from({ length: 8 }, () => start('order-3003', { agent: 'asker', task: 'at once' })));
    const id = starts[0].body.run.id as string;
    expect(starts.map((reply) => [reply.status, reply.body.run.id])).toEqual(starts.map(() => [201, id]));
    expect(starts.filter((reply) => reply.replayed === null)).toHaveLength(1);
    expect(await runsWithTask('at once')).toEqual([id]);
    await stack.waitForQuestion(id);
  });

  it('finds the run an earlier release made for the key, whose id came from the key', async () => {
    const connection = new Redis(stack.config.redisUrl);
    try {
      const store = new ParleyStore(connection, { prefix: stack.config.prefix, eventsMaxLen: 1000, retentionSecs: 60, leaseMs: 1000 });
      const runId = keyedId({ tenant: 'acme', sub: 'alice' }, 'order-legacy');
      // As that release made it: no record of the key, no job yet (its start died before enqueuing it).
      await store.runs.create({ tenant: 'acme', runId, owner: 'alice', agent: 'asker', task: 'from before', trigger: 'api' });
      const retry = await start('order-legacy', { agent: 'asker', task: 'from before' });
      expect(retry).toMatchObject({ status: 201, replayed: 'true', body: { run: { id: runId } } });
      await stack.waitForQuestion(runId);
    } finally {
      connection.disconnect();
    }
  });

  it('is refused for a start that asks something else, and that start makes nothing', async () => {
    const first = await start('order-2001', { agent: 'asker', task: 'the first ask' });
    expect(first.status).toBe(201);
    const other = await start('order-2001', { agent: 'asker', task: 'another ask' });
    expect(other).toMatchObject({ status: 409, body: { error: { code: 'conflict', message: expect.stringContaining('Idempotency-Key was used for another start (task differs)') } } });
    expect(await runsWithTask('another ask')).toEqual([]);
    // Unattended is part of what was asked: a run nobody watches is not the one somebody does.
    const unattended = await start('order-2001', { agent: 'asker', task: 'the first ask', unattended: true });
    expect(unattended).toMatchObject({ status: 409, body: { error: { message: expect.stringContaining('(unattended differs)') } } });
    expect(await start('order-2001', { agent: 'asker', task: 'the first ask', unattended: false })).toMatchObject({ status: 201, replayed: 'true', body: { run: { id: first.body.run.id } } });
  });

  it("is the caller's own: another user's start with the same key makes its own run, and starts without a key are each new", async () => {
    const bob = stack.token({ sub: 'bob' });
    const alices = await start('shared-key', { agent: 'asker', task: 'same key' });
    const bobs = await start('shared-key', { agent: 'asker', task: 'same key' }, bob);
    expect(bobs).toMatchObject({ status: 201, replayed: null });
    expect(bobs.body.run.id).not.toBe(alices.body.run.id);
    const plain = [await start(null, { agent: 'asker', task: 'no key' }), await start(null, { agent: 'asker', task: 'no key' })];
    expect(new Set(plain.map((reply) => reply.body.run.id)).size).toBe(2);
  });

  it('that is not printable ASCII, or too long, is a 400 naming the header, and nothing starts', async () => {
    for (const key of ['has space', 'x'.repeat(201), 'tab\there']) {
      const refused = await start(key, { agent: 'asker', task: 'bad key' });
      expect(refused).toMatchObject({ status: 400, body: { error: { code: 'validation_failed', details: { issues: [expect.objectContaining({ field: 'Idempotency-Key' })] } } } });
    }
    expect(await runsWithTask('bad key')).toEqual([]);
  });
});

describe('an Idempotency-Key whose run was removed after its retention', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.start({ agentsDir: writeAgents([askerAgent()]), overrides: { retentionSecs: 1 } });
  });
  afterAll(() => stack.close());

  it('makes a new run with a new id, which runs', async () => {
    const start = () => stack.request('POST', '/v1/runs', { agent: 'asker', task: 'kept a second' }, stack.token(), { 'idempotency-key': 'order-4004' });
    const record = new RedisKeys(stack.config.prefix).startKey('acme', 'alice', 'order-4004');
    const first = await start();
    expect(first.status).toBe(201);
    const firstId = first.body.run.id as string;
    expect(await stack.redis.get(record)).toBe(firstId);
    await stack.waitForQuestion(firstId);
    expect((await stack.http('POST', `/v1/runs/${firstId}/stop`)).status).toBe(200);
    await waitFor(async () => (await stack.http('GET', `/v1/runs/${firstId}`)).status === 404, { message: 'the stopped run removed after its retention' });
    // The key's record goes with its run.
    await waitFor(async () => (await stack.redis.exists(record)) === 0, { message: "the key's record removed with its run" });

    const second = await start();
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    expect(second.body.run.id).not.toBe(firstId);
    // Its first job is not mistaken for the removed run's (BullMQ keeps finished jobs for a while).
    await stack.waitForQuestion(second.body.run.id);
    const again = await start();
    expect(again).toMatchObject({ status: 201, body: { run: { id: second.body.run.id } } });
  });
});

describe('a run start with an Idempotency-Key, at the tenant limit', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.start({ agentsDir: writeAgents([askerAgent()]), overrides: { limitConcurrentRuns: 1 } });
  });
  afterAll(() => stack.close());

  const start = async (key: string) =>
    fetch(`${stack.url}/v1/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.token()}`, 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify({ agent: 'asker', task: 'the only one' }),
    }).then(async (response) => ({ status: response.status, replayed: response.headers.get('idempotent-replayed'), body: (await response.json()) as any }));

  it('a repeat is answered with the run it made, though that run fills the limit; a new start is refused', async () => {
    const first = await start('order-7001');
    expect(first).toMatchObject({ status: 201, replayed: null });
    await stack.waitForQuestion(first.body.run.id);
    expect(await start('order-7001')).toMatchObject({ status: 201, replayed: 'true', body: { run: { id: first.body.run.id } } });
    expect(await start('order-7002')).toMatchObject({ status: 429, body: { error: { code: 'rate_limited' } } });
  });

  it('sent many times at once while the limit has room for one, makes one run: every start is answered with it', async () => {
    const stop = async (runId: string) => {
      expect((await stack.http('POST', `/v1/runs/${runId}/stop`)).status).toBe(200);
      await stack.waitForStatus(runId, 'cancelled');
    };
    await stop((await start('order-7001')).body.run.id);
    for (let round = 0; round < 5; round++) {
      const key = `order-8${round}`;
      const starts = await Promise.all(Array.from({ length: 8 }, () => start(key)));
      const id = starts.find((reply) => reply.status === 201)?.body.run.id as string;
      expect(starts.map((reply) => [reply.status, reply.body.run?.id])).toEqual(starts.map(() => [201, id]));
      expect(starts.filter((reply) => reply.replayed === null)).toHaveLength(1);
      await stop(id);
    }
  });
});
