import { askerAgent } from '../support/agents';
import { TestStack, writeAgents } from '../support/stack';

/**
 * Within a tenant's limits, one user's: runs started for one owner and messages sent by one user per
 * minute, so that one end user cannot use up what the whole tenant may do. Services speak for many
 * users: their starts count against the user they start for, their messages only against the tenant.
 */
describe('per-user limits within a tenant', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await TestStack.start({
      overrides: { limitRunsPerMinute: 20, limitUserRunsPerMinute: 2, limitConcurrentRuns: 0, limitMessagesPerMinute: 20, limitUserMessagesPerMinute: 2 },
      agentsDir: writeAgents([askerAgent()]),
    });
  });

  afterAll(() => stack.close());

  const member = (sub: string) => stack.token({ tenant: 'users', sub, role: 'member' });
  const start = (token: string, onBehalfOf?: string) => stack.request('POST', '/v1/runs', { agent: 'asker', task: 'ask', ...(onBehalfOf ? { onBehalfOf } : {}) }, token);
  const runsOf = async (owner: string) =>
    ((await stack.http<{ runs: Array<{ owner: string }> }>('GET', '/v1/runs?limit=100', undefined, stack.token({ tenant: 'users', sub: 'root', role: 'admin' }))).body.runs).filter((run) => run.owner === owner).length;

  it("refuses a start past the owner's runs per minute (429, Retry-After), creating nothing; other users, and services for other users, still start", async () => {
    const alice = member('alice');
    expect((await start(alice)).status).toBe(201);
    expect((await start(alice)).status).toBe(201);
    const refused = await start(alice);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ error: { code: 'rate_limited', details: { limit: 'user_runs_per_minute', retryAfterSecs: expect.any(Number) } } });
    expect(Number(refused.headers.get('retry-after'))).toBe(refused.body.error.details.retryAfterSecs);
    expect(refused.body.error.message).toContain('alice');
    expect(await runsOf('alice')).toBe(2);

    expect((await start(member('bob'))).status).toBe(201);
    // A service's start counts against the user it starts for.
    const backend = stack.token({ tenant: 'users', sub: 'backend', role: 'service' });
    expect((await start(backend, 'alice')).body).toMatchObject({ error: { details: { limit: 'user_runs_per_minute' } } });
    expect((await start(backend, 'carol')).status).toBe(201);
    expect([await runsOf('alice'), await runsOf('carol')]).toEqual([2, 1]);
  });

  it("refuses a user's message past their messages per minute, over HTTP and the socket, keeping nothing; a service's messages count only for the tenant", async () => {
    const dave = member('dave');
    const runId = (await start(dave)).body.run.id as string;
    await stack.waitForQuestion(runId, 20_000, dave);
    const send = (token: string, text: string) => stack.request('POST', `/v1/runs/${runId}/messages`, { text }, token);
    expect((await send(dave, 'one')).status).toBe(202);
    expect((await send(dave, 'two')).status).toBe(202);
    const refused = await send(dave, 'three');
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ error: { code: 'rate_limited', details: { limit: 'user_messages_per_minute' } } });

    const client = await stack.connect(dave);
    try {
      const ack = await client.socket.timeout(10_000).emitWithAck('message', { runId, text: 'over the socket' });
      expect(ack).toMatchObject({ error: { code: 'rate_limited', details: { limit: 'user_messages_per_minute', retryAfterSecs: expect.any(Number) } } });
    } finally {
      client.close();
    }
    const backend = stack.token({ tenant: 'users', sub: 'backend', role: 'service' });
    for (const text of ['s1', 's2', 's3']) {
      expect((await send(backend, text)).status).toBe(202);
    }
    const events = (await stack.http<{ events: Array<{ type: string }> }>('GET', `/v1/runs/${runId}/events`, undefined, dave)).body.events;
    expect(events.filter((event) => event.type === 'message.received')).toHaveLength(5);
  });
});
