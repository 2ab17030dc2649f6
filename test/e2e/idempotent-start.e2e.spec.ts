import { askerAgent } from '../support/agents';
import { TestStack, writeAgents } from '../support/stack';

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

  it('is refused for a start that asks something else, and that start makes nothing', async () => {
    const first = await start('order-2001', { agent: 'asker', task: 'the first ask' });
    expect(first.status).toBe(201);
    const other = await start('order-2001', { agent: 'asker', task: 'another ask' });
    expect(other).toMatchObject({ status: 409, body: { error: { code: 'conflict', message: expect.stringContaining('Idempotency-Key was used for another start (task differ)') } } });
    expect(await runsWithTask('another ask')).toEqual([]);
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
