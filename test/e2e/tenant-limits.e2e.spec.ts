import type { NestExpressApplication } from '@nestjs/platform-express';
import { io, type Socket } from 'socket.io-client';
import { createGateway } from '../../apps/gateway/src/gateway.app';
import { TestClient, TestStack, writeAgents } from '../support/stack';
import { waitFor } from '../support/wait-for';

const call = (name: string, input: Record<string, unknown>) => ({ tool_calls: [{ name, input }] });

describe('per-tenant limits (Redis-backed, across gateways)', () => {
  let stack: TestStack;
  let second: NestExpressApplication;
  let secondUrl: string;
  const clients: TestClient[] = [];

  beforeAll(async () => {
    stack = await TestStack.start({
      overrides: { limitRunsPerMinute: 3, limitConcurrentRuns: 2, limitOpenInteractions: 10, limitSockets: 2, limitMessagesPerMinute: 3 },
      agentsDir: writeAgents([
        {
          name: 'asker',
          model: { provider: 'scripted', turns: [call('ask_user_text', { question: 'Anyone there?' }), call('finish', { summary: 'done' })] },
          tools: ['ask_user_text', 'finish'],
          limits: { max_iterations: 5, interaction_timeout_secs: 0 },
        },
      ]),
    });
    // A second gateway on its own port, sharing the stack's Redis and prefix.
    second = await createGateway(stack.config);
    await second.listen(0, '127.0.0.1');
    secondUrl = (await second.getUrl()).replace('[::1]', '127.0.0.1');
  });

  afterAll(async () => {
    clients.forEach((client) => client.close());
    await second.close();
    await stack.close();
  });

  const token = (tenant: string) => stack.token({ tenant, sub: 'alice', role: 'member' });
  const start = (tenant: string, url = stack.url) =>
    fetch(`${url}/v1/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token(tenant)}`, 'content-type': 'application/json' },
      body: JSON.stringify({ agent: 'asker', task: 'ask' }),
    }).then(async (response) => ({ status: response.status, retryAfter: response.headers.get('retry-after'), body: (await response.json()) as any }));
  const runCount = async (tenant: string) => (await stack.http<{ runs: unknown[] }>('GET', '/v1/runs?limit=100', undefined, token(tenant))).body.runs.length;
  const connect = async (tenant: string, url = stack.url) => {
    const socket = io(`${url}/v1`, { auth: { token: token(tenant) }, transports: ['websocket'], reconnection: false, forceNew: true });
    return new Promise<{ ok: true; client: TestClient } | { ok: false; error: any }>((resolve) => {
      socket.once('connect', () => {
        const client = new TestClient(socket);
        clients.push(client);
        resolve({ ok: true, client });
      });
      socket.once('connect_error', (error) => {
        socket.close();
        resolve({ ok: false, error });
      });
    });
  };
  const connected = async (tenant: string, url = stack.url) => {
    const result = await connect(tenant, url);
    if (!result.ok) {
      throw new Error(`connection refused: ${String(result.error)}`);
    }
    return result.client;
  };

  it('past the runs-per-minute limit a start is 429 with Retry-After and creates nothing; other tenants are unaffected', async () => {
    // Stop each run at once so the concurrent-run limit is not what refuses.
    for (let i = 0; i < 3; i++) {
      const started = await start('rpm');
      expect(started.status).toBe(201);
      expect((await stack.http('POST', `/v1/runs/${started.body.run.id}/stop`, undefined, token('rpm'))).status).toBe(200);
    }
    const refused = await start('rpm');
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ error: { code: 'rate_limited', details: { limit: 'runs_per_minute', retryAfterSecs: expect.any(Number) } } });
    expect(Number(refused.retryAfter)).toBe(refused.body.error.details.retryAfterSecs);
    expect(Number(refused.retryAfter)).toBeGreaterThan(0);
    expect(Number(refused.retryAfter)).toBeLessThanOrEqual(60);
    expect(await runCount('rpm')).toBe(3);

    expect((await start('rpm-other')).status).toBe(201);
  });

  it('at the concurrent-run limit a start is 429 until a run ends', async () => {
    const a = await start('conc');
    const b = await start('conc');
    expect([a.status, b.status]).toEqual([201, 201]);
    const refused = await start('conc');
    expect(refused).toMatchObject({ status: 429, retryAfter: '30', body: { error: { code: 'rate_limited', details: { limit: 'concurrent_runs', retryAfterSecs: 30 } } } });
    // The limit, not how many runs the tenant has: whoever starts may be a member, who sees only their own.
    expect(refused.body.error.message).toBe('tenant conc is at its limit of 2 runs that have not ended');
    expect(await runCount('conc')).toBe(2);

    expect((await stack.http('POST', `/v1/runs/${a.body.run.id}/stop`, undefined, token('conc'))).status).toBe(200);
    expect((await start('conc')).status).toBe(201);
    expect(await runCount('conc')).toBe(3);
  });

  it('past the messages-per-minute limit a message is 429 over HTTP and as a socket ack', async () => {
    const started = await start('msg');
    expect(started.status).toBe(201);
    const runId = started.body.run.id as string;
    const send = () => stack.http('POST', `/v1/runs/${runId}/messages`, { text: 'hello' }, token('msg'));
    for (let i = 0; i < 3; i++) {
      expect((await send()).status).toBe(202);
    }
    const refused = await fetch(`${stack.url}/v1/runs/${runId}/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token('msg')}`, 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'one too many' }),
    });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await refused.json()).toMatchObject({ error: { code: 'rate_limited', details: { limit: 'messages_per_minute' } } });

    const client = await connected('msg');
    const ack = await client.socket.timeout(10_000).emitWithAck('message', { runId, text: 'over the socket' });
    expect(ack).toMatchObject({ error: { code: 'rate_limited', details: { limit: 'messages_per_minute', retryAfterSecs: expect.any(Number) } } });
    // Nothing was kept: only the three accepted messages wait.
    const events = (await stack.http<{ events: any[] }>('GET', `/v1/runs/${runId}/events`, undefined, token('msg'))).body.events;
    expect(events.filter((event) => event.type === 'message.received')).toHaveLength(3);
    client.close();
  });

  it('past the socket limit the handshake is refused with rate_limited; a freed slot admits a new one', async () => {
    const first = await connected('sock');
    await connected('sock');
    const refused = await connect('sock');
    expect(refused.ok).toBe(false);
    expect(refused.ok ? undefined : refused.error.data).toMatchObject({ error: { code: 'rate_limited', details: { limit: 'sockets' } } });

    first.close();
    await waitFor(async () => {
      const retry = await connect('sock');
      return retry.ok;
    }, { message: 'a connection once a slot is free' });
  });

  it('a refused handshake leaves nothing behind: no timer holds its socket until the token expires', async () => {
    // Only a connected socket is closed at its token's expiry, by a timer of the token's lifetime.
    const expiryTimers = (calls: Array<[unknown, number?]>) => calls.filter(([, ms]) => (ms ?? 0) > 600_000).length;
    const timers = jest.spyOn(global, 'setTimeout');
    try {
      const first = await connected('refused');
      await connected('refused');
      expect(expiryTimers(timers.mock.calls as Array<[unknown, number?]>)).toBe(2);
      for (let i = 0; i < 5; i++) {
        expect((await connect('refused')).ok).toBe(false);
      }
      expect(expiryTimers(timers.mock.calls as Array<[unknown, number?]>)).toBe(2);
      first.close();
    } finally {
      timers.mockRestore();
    }
  });

  it('limits hold across gateways', async () => {
    // Sockets: two on the stack's gateway fill the tenant's slots on the second gateway too.
    await connected('multi');
    const other = await connected('multi', secondUrl);
    const refused = await connect('multi', secondUrl);
    expect(refused.ok ? undefined : refused.error.data).toMatchObject({ error: { code: 'rate_limited', details: { limit: 'sockets' } } });
    other.close();
    await waitFor(async () => (await connect('multi')).ok, { message: 'a connection on the first gateway once the second frees a slot' });

    // Runs: starts through either gateway share the tenant's count.
    expect((await start('multi', stack.url)).status).toBe(201);
    expect((await start('multi', secondUrl)).status).toBe(201);
    const concurrent = await start('multi', secondUrl);
    expect(concurrent).toMatchObject({ status: 429, body: { error: { details: { limit: 'concurrent_runs' } } } });
    expect(await runCount('multi')).toBe(2);
  });
});

describe('runs per user', () => {
  let stack: TestStack;
  beforeAll(async () => {
    stack = await TestStack.start({
      overrides: { limitConcurrentRuns: 10, limitUserConcurrentRuns: 2 },
      agentsDir: writeAgents([
        {
          name: 'asker',
          model: { provider: 'scripted', turns: [call('ask_user_text', { question: 'Anyone there?' }), call('finish', { summary: 'done' })] },
          tools: ['ask_user_text', 'finish'],
          limits: { max_iterations: 5, interaction_timeout_secs: 0 },
        },
      ]),
    });
  });
  afterAll(async () => {
    await stack.close();
  });

  const start = (token: string, extra: Record<string, unknown> = {}) => stack.http<any>('POST', '/v1/runs', { agent: 'asker', task: 'ask', ...extra }, token);

  it("one user cannot hold the tenant's runs: past their own runs not ended a start is 429, others still start, an ended run makes room", async () => {
    const bob = stack.token({ sub: 'bob', role: 'member' });
    const service = stack.token({ sub: 'backend', role: 'service' });
    const first = await start(bob);
    // A service's start on bob's behalf counts as bob's.
    expect([first.status, (await start(service, { onBehalfOf: 'bob' })).status]).toEqual([201, 201]);
    const refused = await start(bob);
    expect(refused).toEqual({
      status: 429,
      body: { error: { code: 'rate_limited', message: 'bob has 2 runs that have not ended (limit per user 2)', details: { limit: 'user_concurrent_runs', retryAfterSecs: 30 } } },
    });
    expect((await start(service, { onBehalfOf: 'bob' })).status).toBe(429);
    expect((await start(stack.token({ sub: 'alice', role: 'member' }))).status).toBe(201);

    expect((await stack.http('POST', `/v1/runs/${first.body.run.id}/stop`, undefined, bob)).status).toBe(200);
    expect((await start(bob)).status).toBe(201);
  });
});

describe('connections per user', () => {
  let stack: TestStack;
  const sockets: Socket[] = [];
  beforeAll(async () => {
    stack = await TestStack.start({ overrides: { limitSockets: 10, limitSocketsPerUser: 2 } });
  });
  afterAll(async () => {
    sockets.forEach((socket) => socket.close());
    await stack.close();
  });

  const connect = (sub: string) => {
    const socket = io(`${stack.url}/v1`, { auth: { token: stack.token({ sub }) }, transports: ['websocket'], reconnection: false, forceNew: true });
    sockets.push(socket);
    return new Promise<{ ok: true; socket: Socket } | { ok: false; error: any }>((resolve) => {
      socket.once('connect', () => resolve({ ok: true, socket }));
      socket.once('connect_error', (error) => resolve({ ok: false, error }));
    });
  };

  it("one user cannot hold the tenant's connections: past their own limit their handshake is refused, others still connect", async () => {
    const first = await connect('mallory');
    expect((await connect('mallory')).ok).toBe(true);
    const refused = await connect('mallory');
    expect(refused.ok ? undefined : refused.error.data).toMatchObject({ error: { code: 'rate_limited', details: { limit: 'user_sockets' } } });
    expect((await connect('alice')).ok).toBe(true);

    if (first.ok) {
      first.socket.close();
    }
    await waitFor(async () => (await connect('mallory')).ok, { message: "a connection once one of mallory's is closed" });
  });
});

describe('subscribes per socket', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await TestStack.start({ overrides: { limitSocketSubscribesPerMinute: 1 } });
  });

  afterAll(() => stack.close());

  it('past the burst a subscribe is refused with rate_limited, and the subscription the socket had stays', async () => {
    const client = await stack.connect();
    try {
      const replies = [];
      for (let i = 0; i < 11; i++) {
        replies.push(await client.subscribe({ types: ['run.created'] }));
      }
      expect(replies.slice(0, 10).every((reply) => reply.ok === true)).toBe(true);
      expect(replies[10]).toMatchObject({ error: { code: 'rate_limited', details: { limit: 'socket_subscribes_per_minute', retryAfterSecs: 60 } } });
      // The refused subscribe changed nothing: the socket still gets what it subscribed to before.
      const runId = await stack.startRun('demo');
      await client.waitForEvent((event) => event.type === 'run.created' && event.runId === runId);
      // Another socket of the same user has a budget of its own.
      const other = await stack.connect();
      try {
        expect(await other.subscribe()).toMatchObject({ ok: true });
      } finally {
        other.close();
      }
    } finally {
      client.close();
    }
  });
});
