import { ApiClient } from './api.client';
import { ApiError } from './api.error';
import { interactionFixture } from '../testing/interaction.fixture';

type Call = { url: string; init: RequestInit };

function client(reply: (call: Call) => Response | Promise<Response>) {
  const calls: Call[] = [];
  const fetchFn = ((url: string, init: RequestInit) => {
    const call = { url, init };
    calls.push(call);
    return Promise.resolve(reply(call));
  }) as unknown as typeof fetch;
  return { api: new ApiClient('http://gw:1', 'tok', fetchFn, [0, 0]), calls };
}

const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

describe('ApiClient', () => {
  it('sends the bearer token, query and JSON body', async () => {
    const { api, calls } = client(() => json(200, { interaction: answered }));
    await api.answer('i/1', { choice: 1 });
    expect(calls[0].url).toBe('http://gw:1/v1/interactions/i%2F1/answer');
    expect(calls[0].init.method).toBe('POST');
    expect(calls[0].init.headers).toMatchObject({ authorization: 'Bearer tok', 'content-type': 'application/json' });
    expect(calls[0].init.body).toBe('{"choice":1}');

    const list = client(() => json(200, { runs: [] }));
    await list.api.listRuns({ status: 'waiting', limit: 5 });
    expect(list.calls[0].url).toBe('http://gw:1/v1/runs?status=waiting&limit=5');
  });

  it('follows a short page of runs with its next, until the limit is found or the listing ends', async () => {
    const pages: Record<string, unknown> = {
      first: { runs: [], next: '1700.0' },
      '1700.0': { runs: [{ ...runFixture, id: 'r1' }], next: '1600.3' },
      '1600.3': { runs: [{ ...runFixture, id: 'r2' }], next: null },
    };
    const { api, calls } = client((call) => json(200, pages[new URL(call.url).searchParams.get('after') ?? 'first']));
    expect(await api.listRuns({ status: 'waiting', limit: 3 })).toEqual({ runs: [expect.objectContaining({ id: 'r1' }), expect.objectContaining({ id: 'r2' })], next: null });
    expect(calls.map((call) => new URL(call.url).search)).toEqual(['?status=waiting&limit=3', '?status=waiting&limit=3&after=1700.0', '?status=waiting&limit=2&after=1600.3']);
  });

  it('calls the approval routes', async () => {
    const { api, calls } = client((call) => {
      if (call.url.includes('safe-commands')) {
        return json(200, { agent: 'echo', safeCommands: [{ entry: 'ls', source: 'default', note: 'n' }, { entry: 'make', source: 'agent:echo' }] });
      }
      if (call.url.endsWith('/audit')) {
        return json(200, { entries: [] });
      }
      return json(200, call.url.includes('/claim') ? { interaction: answered } : { approvals: [answered] });
    });
    expect((await api.listApprovals({ agent: 'echo', tool: 'shell', runId: 'r1' })).approvals).toHaveLength(1);
    await api.claimApproval('i1');
    await api.releaseApproval('i1');
    await expect(api.safeCommands('echo')).resolves.toEqual({
      agent: 'echo',
      safeCommands: [
        { entry: 'ls', source: 'default', note: 'n' },
        { entry: 'make', source: 'agent:echo' },
      ],
    });
    await expect(api.getAudit('r1')).resolves.toEqual([]);
    expect(calls.map((call) => `${call.init.method} ${call.url}`)).toEqual([
      'GET http://gw:1/v1/approvals?agent=echo&tool=shell&runId=r1',
      'POST http://gw:1/v1/approvals/i1/claim',
      'DELETE http://gw:1/v1/approvals/i1/claim',
      'GET http://gw:1/v1/approvals/safe-commands?agent=echo',
      'GET http://gw:1/v1/runs/r1/audit',
    ]);
  });

  it('starts runs unattended or as a chat, stops runs, queues messages and lists schedules', async () => {
    const run = { ...runFixture, unattended: true, trigger: 'chat' };
    const schedule = { agent: 'echo', name: 'daily', cron: '0 9 * * *', owner: 'ops', task: 't', next: null };
    const { api, calls } = client((call) => {
      if (call.url.endsWith('/messages')) {
        return json(202, { messageId: 'm1', pending: 2 });
      }
      return json(200, call.url.endsWith('/schedules') ? { schedules: [schedule] } : { run });
    });
    await expect(api.startRun('echo', 'go', { unattended: true, trigger: 'chat' })).resolves.toMatchObject({ unattended: true, trigger: 'chat' });
    await api.startRun('echo', 'go');
    await expect(api.stopRun('r/1')).resolves.toMatchObject({ id: 'r1' });
    await expect(api.sendMessage('r1', 'hello')).resolves.toEqual({ messageId: 'm1', pending: 2 });
    await expect(api.listSchedules()).resolves.toEqual([schedule]);
    expect(calls.map((call) => `${call.init.method} ${call.url} ${typeof call.init.body === 'string' ? call.init.body : '-'}`)).toEqual([
      'POST http://gw:1/v1/runs {"agent":"echo","task":"go","unattended":true,"trigger":"chat"}',
      'POST http://gw:1/v1/runs {"agent":"echo","task":"go"}',
      'POST http://gw:1/v1/runs/r%2F1/stop {}',
      'POST http://gw:1/v1/runs/r1/messages {"text":"hello"}',
      'GET http://gw:1/v1/schedules -',
    ]);
  });

  it('rejects a safe command of an unknown source', async () => {
    const { api } = client(() => json(200, { agent: null, safeCommands: [{ entry: 'ls', source: 'elsewhere' }] }));
    await expect(api.safeCommands()).rejects.toMatchObject({ code: 'bad_response' });
  });

  it('throws the error body as an ApiError with status and code', async () => {
    const { api } = client(() => json(409, { error: { code: 'conflict', message: 'already answered by ann at T' } }));
    const error = await api.getInteraction('x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 409, code: 'conflict', message: 'already answered by ann at T' });
  });

  it("takes an error code it does not know (a newer gateway's) as the gateway's fault, keeping its message", async () => {
    const { api } = client(() => json(418, { error: { code: 'a_code_from_the_future', message: 'the gateway says why', details: { x: 1 } } }));
    await expect(api.getInteraction('x')).rejects.toMatchObject({ status: 418, code: 'internal', message: 'the gateway says why', details: { x: 1 } });
  });

  it('reports a non-JSON failure by its HTTP status', async () => {
    const { api } = client(() => new Response('<html>bad gateway</html>', { status: 502, statusText: 'Bad Gateway' }));
    await expect(api.listAgents()).rejects.toMatchObject({ status: 502, code: 'http_error', message: 'GET /v1/agents failed: HTTP 502 Bad Gateway' });
  });

  it('rejects a reply that does not match the contract', async () => {
    const { api } = client(() => json(200, { runs: [{ id: 1 }] }));
    await expect(api.listRuns()).rejects.toMatchObject({ code: 'bad_response', message: expect.stringContaining('runs.0.id') });
  });

  it('turns a network failure into a network_error naming the cause', async () => {
    const { api } = client(() => {
      throw Object.assign(new TypeError('fetch failed'), { cause: new Error('connect ECONNREFUSED 127.0.0.1:1') });
    });
    await expect(api.listAgents()).rejects.toMatchObject({ status: 0, code: 'network_error', message: 'cannot reach the gateway at http://gw:1: connect ECONNREFUSED 127.0.0.1:1' });
  });

  it('tries a read again after no reply or an unavailable gateway, up to three times, and never after a refusal', async () => {
    let n = 0;
    const flaky = client(() => {
      n++;
      if (n === 1) {
        throw new TypeError('fetch failed');
      }
      return n === 2 ? new Response('', { status: 503 }) : json(200, { agents: [] });
    });
    await expect(flaky.api.listAgents()).resolves.toEqual([]);
    expect(flaky.calls).toHaveLength(3);

    const down = client(() => new Response('', { status: 502 }));
    await expect(down.api.listAgents()).rejects.toMatchObject({ status: 502 });
    expect(down.calls).toHaveLength(3);

    // A request that got no reply in time is not tried again: its caller would wait three timeouts.
    const slow = client(() => {
      throw new DOMException('The operation was aborted due to timeout', 'TimeoutError');
    });
    await expect(slow.api.listAgents()).rejects.toMatchObject({ code: 'network_error', message: expect.stringContaining('no reply within 30s') });
    expect(slow.calls).toHaveLength(1);

    const refused = client(() => json(404, { error: { code: 'not_found', message: 'no' } }));
    await expect(refused.api.getRun('r1')).rejects.toMatchObject({ status: 404 });
    expect(refused.calls).toHaveLength(1);
  });

  it('sends a start and a message with an Idempotency-Key, the same on every try; a stop is not tried again', async () => {
    let n = 0;
    const { api, calls } = client((call) => {
      n++;
      if (n % 2 === 1) {
        throw new TypeError('fetch failed');
      }
      return call.url.endsWith('/messages') ? json(202, { messageId: 'm1', pending: 1 }) : json(201, { run: runFixture });
    });
    await api.startRun('echo', 't');
    await api.sendMessage('r1', 'hello');
    const keys = calls.map((call) => (call.init.headers as Record<string, string>)['idempotency-key']);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[0]).toBe(keys[1]);
    expect(keys[2]).toBe(keys[3]);
    expect(keys[2]).not.toBe(keys[0]);

    const stop = client(() => {
      throw new TypeError('fetch failed');
    });
    await expect(stop.api.stopRun('r1')).rejects.toMatchObject({ code: 'network_error' });
    expect(stop.calls).toHaveLength(1);
  });

  it("takes a retried answer's 409 for success when the interaction holds this very answer by the caller, and not otherwise", async () => {
    const token = `x.${Buffer.from(JSON.stringify({ sub: 'ann' })).toString('base64url')}.y`;
    const mine = interactionFixture({ prompt: { kind: 'free_text', prompt: 'p' }, status: 'answered', answer: { kind: 'free_text', text: 'yes' }, resolvedBy: { kind: 'user', subject: 'ann' } });
    const calls: string[] = [];
    let n = 0;
    const fetchFn = ((url: string, init: RequestInit) => {
      calls.push(`${init.method} ${url}`);
      n++;
      if (n === 1) {
        return Promise.reject(new TypeError('fetch failed'));
      }
      return Promise.resolve(init.method === 'GET' ? json(200, { interaction: mine }) : json(409, { error: { code: 'conflict', message: 'already answered by ann' } }));
    }) as unknown as typeof fetch;
    const api = new ApiClient('http://gw:1', token, fetchFn, [0, 0]);
    await expect(api.answer('i1', { text: 'yes' })).resolves.toMatchObject({ status: 'answered' });
    expect(calls).toEqual(['POST http://gw:1/v1/interactions/i1/answer', 'POST http://gw:1/v1/interactions/i1/answer', 'GET http://gw:1/v1/interactions/i1']);

    n = 0;
    await expect(api.answer('i1', { text: 'no' })).rejects.toMatchObject({ status: 409 });
    // A first try's 409 is someone else's answer, or an earlier one: not looked into.
    n = 1;
    calls.length = 0;
    await expect(api.answer('i1', { text: 'yes' })).rejects.toMatchObject({ status: 409 });
    expect(calls).toEqual(['POST http://gw:1/v1/interactions/i1/answer']);
    await expect(api.answer('i1', { text: 'yes' }, { sentBefore: true })).resolves.toMatchObject({ status: 'answered' });
  });

  it('maps a socket error ack to the HTTP status of its code', () => {
    expect(ApiError.fromBody({ error: { code: 'invalid_answer', message: 'm' } }).status).toBe(422);
    expect(ApiError.fromBody({ error: { code: 'conflict', message: 'm' } }).status).toBe(409);
  });
});

const answered = interactionFixture({ prompt: { kind: 'free_text', prompt: 'p' }, status: 'answered' });

const runFixture = {
  id: 'r1',
  tenant: 'dev',
  owner: 'cli',
  agent: 'echo',
  task: 't',
  trigger: 'api',
  status: 'cancelled',
  unattended: false,
  createdAt: 'T',
  updatedAt: 'T',
};
