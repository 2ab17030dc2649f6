import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import jwt from 'jsonwebtoken';
import { parse } from 'yaml';
import { io, type Socket } from 'socket.io-client';
import type { AnswerBody, ErrorCode } from '@parley/contracts';
import { TestStack, writeAgents, type TestClient } from '../support/stack';
import { settledSnapshot, snapshotRedis, type RedisSnapshot } from '../support/redis-snapshot';

/**
 * Invariant 8: bad input gets a clear error and changes nothing. Every error has exactly the shape
 * `{ error: { code, message, details? } }`, and a batch of bad requests leaves every Redis key of
 * the deployment (and the content of each) as it was.
 */

type Reply = { status: number; body: any };

/** A scripted agent that asks one question with `tool`, then finishes. */
function asker(name: string, tool: string, input: Record<string, unknown>): Record<string, unknown> & { name: string } {
  return {
    name,
    description: `asks one question with ${tool}`,
    model: {
      provider: 'scripted',
      turns: [
        { text: 'One question first.', tool_calls: [{ name: tool, input }] },
        { text: 'Thanks.', tool_calls: [{ name: 'finish', input: { summary: 'done' } }] },
      ],
    },
    tools: [tool, 'finish'],
    limits: { max_iterations: 5, max_ask_user_per_loop: 3, interaction_timeout_secs: 3600 },
  };
}

const demo = parse(readFileSync(join(__dirname, '..', '..', 'agents', 'demo.yaml'), 'utf8')) as Record<string, unknown> & { name: string };

const ALICE = { tenant: 'acme', sub: 'alice', role: 'member' } as const;
const BOB = { tenant: 'acme', sub: 'bob', role: 'member' } as const;
const CAROL = { tenant: 'acme', sub: 'carol', role: 'admin' } as const;
const MALLORY = { tenant: 'globex', sub: 'mallory', role: 'member' } as const;
const GLOBEX_ADMIN = { tenant: 'globex', sub: 'root', role: 'admin' } as const;

let stack: TestStack;

beforeAll(async () => {
  const agentsDir = writeAgents([
    demo,
    asker('ask-text', 'ask_user_text', { question: 'Which city?' }),
    asker('ask-confirm', 'ask_user_confirm', { question: 'Deploy now?' }),
    asker('ask-review', 'present_for_review', { title: 'plan.md', markdown: '# Plan' }),
  ]);
  // No sweep during the file: each tick rewrites the sweeper queue's keys, which the snapshots
  // compare, and these tests leave no run for it to repair.
  stack = await TestStack.start({ agentsDir, overrides: { sweepMs: 3_600_000 } });
});

afterAll(async () => {
  await stack.close();
});

// ---------------------------------------------------------------------------------------------
// helpers

/** Exactly `{ error: { code, message, details? } }`, with the code and a message naming each of `mentions`. */
function expectError(reply: Reply | { body: any }, status: number | null, code: ErrorCode, mentions: string[] = []): void {
  if (status !== null && 'status' in reply) {
    expect({ status: reply.status, body: reply.body }).toEqual({ status, body: expect.anything() });
  }
  const body = reply.body;
  expect(body).toEqual(expect.any(Object));
  expect(Object.keys(body)).toEqual(['error']);
  const keys = Object.keys(body.error).sort();
  expect(keys).toEqual(body.error.details === undefined ? ['code', 'message'] : ['code', 'details', 'message']);
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
  expect(body.error.message.length).toBeGreaterThan(0);
  for (const mention of mentions) {
    expect(body.error.message).toContain(mention);
  }
  if (code === 'validation_failed' || code === 'invalid_answer') {
    // The details name each field and its reason.
    expect(body.error.details).toEqual({ issues: expect.any(Array) });
    for (const issue of body.error.details.issues) {
      expect(issue).toEqual({ field: expect.any(String), reason: expect.any(String) });
    }
  }
}

/** The issue list names `field` (as the field, or inside the reason for an unknown key). */
function expectIssue(reply: { body: any }, field: string): void {
  const issues = reply.body.error.details.issues as Array<{ field: string; reason: string }>;
  expect(issues.some((issue) => issue.field === field || issue.field.endsWith(`.${field}`) || issue.reason.includes(`"${field}"`))).toBe(true);
}

function notFound(what: 'run' | 'interaction', id: string): unknown {
  return { error: { code: 'not_found', message: `${what} ${id} not found` } };
}

/** A request with full control over the headers and the raw body. */
async function raw(method: string, path: string, options: { body?: string | Uint8Array; headers?: Record<string, string> } = {}): Promise<Reply> {
  const response = await fetch(`${stack.url}${path}`, { method, headers: options.headers ?? {}, ...(options.body === undefined ? {} : { body: options.body }) });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // left as text: the assertion on the shape will show it
  }
  return { status: response.status, body };
}

function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
}

function signed(payload: Record<string, unknown>, options: jwt.SignOptions = {}, secret = stack.config.jwtSecret): string {
  return jwt.sign(payload, secret, { algorithm: 'HS256', ...options });
}

function base64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/** Tokens that must all be refused, each with a reason the message names. */
function badTokens(): Array<{ name: string; token: string; mention: string }> {
  const now = Math.floor(Date.now() / 1000);
  return [
    { name: 'bad signature', token: signed({ tenant: 'acme', role: 'member' }, { subject: 'alice', expiresIn: 3600 }, 'another-secret-0123456789abcdef'), mention: 'invalid signature' },
    { name: 'expired', token: signed({ tenant: 'acme', role: 'member', exp: now - 3600 }, { subject: 'alice' }), mention: 'expired' },
    { name: 'no tenant claim', token: signed({ role: 'member' }, { subject: 'alice', expiresIn: 3600 }), mention: 'tenant' },
    { name: 'bad tenant claim', token: signed({ tenant: 'Acme Corp', role: 'member' }, { subject: 'alice', expiresIn: 3600 }), mention: 'tenant' },
    { name: 'no subject', token: signed({ tenant: 'acme', role: 'member' }, { expiresIn: 3600 }), mention: 'sub' },
    { name: 'unknown role', token: signed({ tenant: 'acme', role: 'root' }, { subject: 'alice', expiresIn: 3600 }), mention: 'role' },
    {
      name: 'alg none',
      token: `${base64url({ alg: 'none', typ: 'JWT' })}.${base64url({ tenant: 'acme', sub: 'alice', role: 'admin', exp: now + 3600 })}.`,
      mention: 'invalid token',
    },
    { name: 'not a JWT', token: 'not-a-jwt', mention: 'invalid token' },
  ];
}

function snapshot(): Promise<RedisSnapshot> {
  return snapshotRedis(stack);
}

function settled(): Promise<RedisSnapshot> {
  return settledSnapshot(stack);
}

/** Starts a run as alice and waits until it is parked on its first question. */
async function parkedRun(agent: string): Promise<{ runId: string; interaction: any }> {
  const runId = await stack.startRun(agent, 'do the thing', stack.token(ALICE));
  const interaction = await stack.waitForQuestion(runId);
  return { runId, interaction };
}

async function expectStillOpen(runId: string, interactionId: string): Promise<void> {
  const got = await stack.http('GET', `/v1/interactions/${interactionId}`, undefined, stack.token(ALICE));
  expect(got.status).toBe(200);
  expect(got.body.interaction.status).toBe('open');
  expect(got.body.interaction.answer).toBeUndefined();
  const run = await stack.run(runId, stack.token(ALICE));
  expect(run.run).toMatchObject({ status: 'waiting', pendingInteractionId: interactionId });
  expect((await stack.log(runId)).filter((entry) => entry.type === 'answer')).toEqual([]);
}

// ---------------------------------------------------------------------------------------------

describe('starting a run with bad input', () => {
  it('answers each bad body with a clear 4xx and creates nothing', async () => {
    const token = stack.token(ALICE);
    const post = (body: string, headers: Record<string, string> = bearer(token)) => raw('POST', '/v1/runs', { body, headers });
    const before = await settled();

    const malformed = await post('{"agent": "demo", "task": ');
    expectError(malformed, 400, 'bad_request', ['malformed JSON']);
    for (const bare of ['"just a string"', '42', 'null', ' true']) {
      expectError(await post(bare), 400, 'bad_request', ['must be an object or an array']);
    }

    const unknown = await post(JSON.stringify({ agent: 'demo', task: 'plan', priority: 5 }));
    expectError(unknown, 400, 'validation_failed', ['priority']);
    expectIssue(unknown, 'priority');

    const types = await post(JSON.stringify({ agent: 42, task: ['plan'] }));
    expectError(types, 400, 'validation_failed', ['agent', 'task']);
    expectIssue(types, 'agent');
    expectIssue(types, 'task');

    expectError(await post('[]'), 400, 'validation_failed', ['expected object']);
    expectError(await raw('POST', '/v1/runs', { headers: { authorization: `Bearer ${token}` } }), 400, 'validation_failed');
    expectError(await post(JSON.stringify({ task: 'plan' })), 400, 'validation_failed', ['agent']);
    expectError(await post(JSON.stringify({ agent: 'demo' })), 400, 'validation_failed', ['task']);

    for (const task of ['', '   \n\t ']) {
      const empty = await post(JSON.stringify({ agent: 'demo', task }));
      expectError(empty, 400, 'validation_failed', ['task', 'must not be empty']);
      expectIssue(empty, 'task');
    }
    expectError(await post(JSON.stringify({ agent: 'demo', task: 'x'.repeat(20_001) })), 400, 'validation_failed', ['task']);
    expectError(await post(JSON.stringify({ agent: 'Not An Agent!', task: 'plan' })), 400, 'validation_failed', ['agent']);

    const oversize = await post(JSON.stringify({ agent: 'demo', task: 'x'.repeat(600 * 1024) }));
    expectError(oversize, 413, 'payload_too_large');

    // A webhook's run is unattended: saying otherwise is refused, not overridden.
    const attended = await post(JSON.stringify({ agent: 'demo', task: 'plan', trigger: 'webhook', unattended: false }));
    expectError(attended, 400, 'validation_failed', ['unattended', 'webhook']);
    expectIssue(attended, 'unattended');

    const missingAgent = await post(JSON.stringify({ agent: 'no-such-agent', task: 'plan' }));
    expectError(missingAgent, 404, 'not_found', ['no-such-agent']);

    expect(await snapshot()).toEqual(before);
    expect((await stack.http('GET', '/v1/runs', undefined, token)).body.runs).toEqual([]);
  });
});

describe('bodies that are not JSON', () => {
  it('answers 415 naming the Content-Type header to a POST, PUT or PATCH body not sent as JSON, and writes nothing', async () => {
    const { runId, interaction } = await parkedRun('demo');
    const before = await settled();
    const auth = { authorization: `Bearer ${stack.token(ALICE)}` };
    const admin = { authorization: `Bearer ${stack.token(CAROL)}` };
    const start = JSON.stringify({ agent: 'demo', task: 'plan' });

    for (const contentType of ['text/plain', 'text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', '*/*', 'application/json, text/plain']) {
      const reply = await raw('POST', '/v1/runs', { body: start, headers: { ...auth, 'content-type': contentType } });
      expect({ contentType, status: reply.status }).toEqual({ contentType, status: 415 });
      expectError(reply, 415, 'unsupported_media_type', ['Content-Type', contentType]);
    }
    // Bytes without a Content-Type at all (fetch adds none for them).
    expectError(await raw('POST', '/v1/runs', { body: new TextEncoder().encode(start), headers: auth }), 415, 'unsupported_media_type', ['no Content-Type header']);
    // Every route that reads a body, and before the token is looked at (like malformed JSON).
    const text = { 'content-type': 'text/plain' };
    expectError(await raw('POST', `/v1/interactions/${interaction.id}/answer`, { body: '{"choice":1}', headers: { ...auth, ...text } }), 415, 'unsupported_media_type', ['text/plain']);
    expectError(await raw('POST', `/v1/runs/${runId}/messages`, { body: '{"text":"hi"}', headers: { ...auth, ...text } }), 415, 'unsupported_media_type');
    expectError(await raw('PUT', '/v1/agents/helper', { body: '{"yaml":"name: helper"}', headers: { ...admin, ...text } }), 415, 'unsupported_media_type');
    expectError(await raw('PATCH', `/v1/webhooks/${randomUUID()}`, { body: '{"enabled":false}', headers: { ...admin, ...text } }), 415, 'unsupported_media_type');
    expectError(await raw('POST', '/v1/runs', { body: start, headers: text }), 415, 'unsupported_media_type');
    // JSON in a charset or content encoding the gateway does not read.
    expectError(await raw('POST', '/v1/runs', { body: start, headers: { ...auth, 'content-type': 'application/json; charset=latin1' } }), 415, 'unsupported_media_type', [
      'charset',
      'Content-Type',
    ]);
    expectError(await raw('POST', '/v1/runs', { body: start, headers: { ...bearer(stack.token(ALICE)), 'content-encoding': 'zzz' } }), 415, 'unsupported_media_type', [
      'Content-Encoding',
    ]);
    // A body that is not what its Content-Encoding says.
    expectError(await raw('POST', '/v1/runs', { body: start, headers: { ...bearer(stack.token(ALICE)), 'content-encoding': 'gzip' } }), 400, 'bad_request', ['Content-Encoding']);

    expect(await snapshot()).toEqual(before);
    await expectStillOpen(runId, interaction.id);

    // A JSON type with a suffix is read as JSON (here: refused for its unknown key, which it names).
    const suffixed = await raw('POST', '/v1/runs', { body: JSON.stringify({ agent: 'demo', task: 'plan', priority: 5 }), headers: { ...auth, 'content-type': 'application/vnd.api+json' } });
    expectError(suffixed, 400, 'validation_failed', ['priority']);
    // No body at all is no body to refuse, whatever the Content-Type says.
    expectError(await raw('POST', '/v1/runs', { headers: { ...auth, ...text } }), 400, 'validation_failed', ['expected object']);
    // A chunked body that declares no type (as streaming clients send) is read as JSON: empty, it is no
    // body; with content, it must be JSON.
    const chunked = (path: string, content: string) =>
      new Promise<Reply>((resolve, reject) => {
        const request = httpRequest(`${stack.url}${path}`, { method: 'POST', headers: { authorization: auth.authorization, 'transfer-encoding': 'chunked' } }, (response) => {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (piece: string) => (text += piece));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }));
        });
        request.on('error', reject);
        request.end(content);
      });
    expect((await chunked(`/v1/runs/${randomUUID()}/stop`, '')).status).toBe(404);
    expectError(await chunked('/v1/runs', JSON.stringify({ agent: 'demo', task: 'plan', priority: 5 })), 400, 'validation_failed', ['priority']);
    expectError(await chunked('/v1/runs', 'agent=demo'), 400, 'bad_request');
    // A browser on another origin reads the 415 (its CORS headers come before any body check).
    const crossOrigin = await fetch(`${stack.url}/v1/runs`, { method: 'POST', headers: { ...auth, ...text, origin: 'https://app.example.com' }, body: start });
    expect(crossOrigin.status).toBe(415);
    expect(crossOrigin.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
  });
});

describe('unknown and malformed ids, queries and routes', () => {
  it('answers 404 for ids that do not exist and 400 for ids that cannot exist, writing nothing', async () => {
    const { runId, interaction } = await parkedRun('demo');
    const before = await settled();
    const token = stack.token(ALICE);
    const missing = randomUUID();

    for (const [method, path] of [
      ['GET', `/v1/runs/${missing}`],
      ['GET', `/v1/runs/${missing}/log`],
      ['GET', `/v1/runs/${missing}/events`],
      ['POST', `/v1/runs/${missing}/cancel`],
    ]) {
      const reply = await stack.http(method, path, undefined, token);
      expect({ path, status: reply.status, body: reply.body }).toEqual({ path, status: 404, body: notFound('run', missing) });
    }
    expect(await stack.http('GET', `/v1/interactions/${missing}`, undefined, token)).toEqual({ status: 404, body: notFound('interaction', missing) });
    expect(await stack.answer(missing, { choice: 1 }, token)).toEqual({ status: 404, body: notFound('interaction', missing) });

    for (const bad of ['bad!id', 'x'.repeat(65), 'a%20b', 'a.b']) {
      for (const [method, path, what] of [
        ['GET', `/v1/runs/${bad}`, 'run id'],
        ['GET', `/v1/runs/${bad}/log`, 'run id'],
        ['POST', `/v1/runs/${bad}/cancel`, 'run id'],
        ['GET', `/v1/interactions/${bad}`, 'interaction id'],
        ['POST', `/v1/interactions/${bad}/answer`, 'interaction id'],
      ]) {
        const reply = await stack.http(method, path, path.endsWith('/answer') ? { choice: 1 } : undefined, token);
        expect({ path, status: reply.status }).toEqual({ path, status: 400 });
        expectError(reply, 400, 'validation_failed', [`invalid ${what}`]);
      }
    }

    const badQueries: Array<[string, string]> = [
      ['/v1/runs?limit=0', 'limit'],
      ['/v1/runs?limit=abc', 'limit'],
      ['/v1/runs?status=sleeping', 'status'],
      ['/v1/runs?color=red', 'color'],
      ['/v1/runs?limit=1&limit=2', 'limit'],
      [`/v1/runs/${runId}/events?since=-1`, 'since'],
      ['/v1/interactions?status=closed', 'status'],
      ['/v1/interactions?runId=bad!id', 'runId'],
    ];
    for (const [path, field] of badQueries) {
      const reply = await stack.http('GET', path, undefined, token);
      expect({ path, status: reply.status }).toEqual({ path, status: 400 });
      expectError(reply, 400, 'validation_failed', [field]);
    }

    expectError(await stack.http('GET', '/v1/nothing-here', undefined, token), 404, 'not_found');
    expectError(await stack.http('DELETE', `/v1/runs/${runId}`, undefined, token), 404, 'not_found');

    expect(await snapshot()).toEqual(before);
    await expectStillOpen(runId, interaction.id);
  });
});

describe('path parameters', () => {
  it('refuses a member on an admin-only route before reading its path, query or body (403, not 400), writing nothing', async () => {
    const before = await settled();
    const member = stack.token(ALICE);
    for (const [method, path, body] of [
      ['PUT', '/v1/agents/BAD', { yaml: 'name: bad' }],
      ['DELETE', '/v1/agents/BAD', undefined],
      ['POST', '/v1/approvals/bad!id/claim', undefined],
      ['DELETE', '/v1/approvals/bad!id/claim', undefined],
      ['GET', '/v1/webhooks/bad!id', undefined],
      // Inputs no route takes, which a caller the route is for is refused with 400.
      ['GET', '/v1/webhooks?bogus=1', undefined],
      ['DELETE', '/v1/agents/quick?force=1', undefined],
      ['POST', '/v1/webhooks/deliveries/bad!id/replay', { why: 'typo' }],
      ['GET', '/v1/schedules?verbose=1', undefined],
    ] as const) {
      const reply = await stack.http(method, path, body, member);
      expect({ method, path, status: reply.status }).toEqual({ method, path, status: 403 });
      expectError(reply, 403, 'forbidden', ['only admins']);
    }
    expect(await snapshot()).toEqual(before);
  });

  it('refuses a query parameter or a body field a route does not take, naming it, and changes nothing', async () => {
    const { runId } = await parkedRun('ask-text');
    const before = await settled();
    const member = stack.token(ALICE);
    const cases: Array<{ method: string; path: string; body?: unknown; field: string }> = [
      { method: 'GET', path: `/v1/runs/${runId}/log?limit=10`, field: 'limit' },
      { method: 'GET', path: `/v1/runs/${runId}?verbose=1`, field: 'verbose' },
      { method: 'GET', path: '/v1/agents?all=true', field: 'all' },
      { method: 'POST', path: `/v1/runs/${runId}/stop?force=1`, body: {}, field: 'force' },
      { method: 'POST', path: `/v1/runs/${runId}/stop`, body: { reason: 'typo' }, field: 'reason' },
    ];
    for (const { method, path, body, field } of cases) {
      const reply = await stack.http(method, path, body, member);
      expectError(reply, 400, 'validation_failed', [field]);
      expect({ path, fields: (reply.body.error.details.issues as Array<{ field: string }>).map((issue) => issue.field) }).toEqual({ path, fields: [field] });
    }
    // A parameter a route takes, sent twice or not a plain number: named, with the reason.
    const repeated: Array<[string, string, string]> = [
      [`/v1/runs?limit=1&limit=2`, 'limit', 'given more than once'],
      [`/v1/runs/${runId}/events?since=1&since=2`, 'since', 'given more than once'],
      [`/v1/interactions?status=open&status=open`, 'status', 'given more than once'],
      // Numbers in a query are decimal digits only.
      [`/v1/runs/${runId}/events?since=`, 'since', 'whole number'],
      [`/v1/runs/${runId}/events?since=0x10`, 'since', 'whole number'],
      [`/v1/runs?limit=1e2`, 'limit', 'whole number'],
      // Past what a client can count exactly: one reason, saying so.
      [`/v1/runs/${runId}/events?since=99999999999999999`, 'since', 'at most 9007199254740991'],
      [`/v1/runs/${runId}/events?since=9999999999999999`, 'since', 'at most 9007199254740991'],
      [`/v1/runs?limit=0`, 'limit', '>=1'],
      [`/v1/runs?limit=501`, 'limit', '<=500'],
    ];
    for (const [path, field, reason] of repeated) {
      const reply = await stack.http('GET', path, undefined, member);
      expectError(reply, 400, 'validation_failed', [field, reason]);
      expectIssue(reply, field);
    }
    expect(await snapshot()).toEqual(before);
    // Without them the same routes answer; an empty body is no body.
    expect((await stack.http('GET', `/v1/runs/${runId}/log`, undefined, member)).status).toBe(200);
    expect((await stack.http('POST', `/v1/runs/${runId}/stop`, {}, member)).status).toBe(200);
  });

  it('names the parameter (not "(root)") in the issues of a path that cannot exist', async () => {
    const before = await settled();
    const member = stack.token(ALICE);
    const admin = stack.token(CAROL);
    const operator = stack.token({ tenant: 'acme', sub: 'ops', role: 'operator' });
    const cases: Array<{ method: string; path: string; token: string; body?: unknown; field: string; what: string }> = [
      { method: 'GET', path: '/v1/runs/bad!id', token: member, field: 'id', what: 'run id' },
      { method: 'POST', path: '/v1/runs/bad!id/messages', token: member, body: { text: 'hi' }, field: 'id', what: 'run id' },
      { method: 'GET', path: '/v1/interactions/bad!id', token: member, field: 'id', what: 'interaction id' },
      { method: 'POST', path: '/v1/interactions/bad!id/answer', token: member, body: { choice: 1 }, field: 'id', what: 'interaction id' },
      { method: 'GET', path: '/v1/agents/BAD', token: member, field: 'name', what: 'agent name' },
      { method: 'PUT', path: '/v1/agents/BAD', token: admin, body: { yaml: 'name: bad' }, field: 'name', what: 'agent name' },
      { method: 'DELETE', path: '/v1/agents/BAD', token: admin, field: 'name', what: 'agent name' },
      { method: 'POST', path: '/v1/approvals/bad!id/claim', token: admin, field: 'id', what: 'interaction id' },
      { method: 'DELETE', path: '/v1/approvals/bad!id/claim', token: admin, field: 'id', what: 'interaction id' },
      { method: 'GET', path: '/v1/webhooks/bad!id', token: admin, field: 'id', what: 'webhook id' },
      { method: 'GET', path: '/v1/webhooks/deliveries/bad!id', token: admin, field: 'deliveryId', what: 'delivery id' },
      { method: 'GET', path: '/v1/operator/tenants/BAD/agents', token: operator, field: 'tenant', what: 'tenant' },
      { method: 'GET', path: '/v1/operator/tenants/acme/agents/BAD/powers', token: operator, field: 'name', what: 'agent name' },
    ];
    for (const { method, path, token, body, field, what } of cases) {
      const reply = await stack.http(method, path, body, token);
      expectError(reply, 400, 'validation_failed', [`invalid ${what}: ${field}: `]);
      const fields = (reply.body.error.details.issues as Array<{ field: string }>).map((issue) => issue.field);
      expect({ method, path, fields: [...new Set(fields)] }).toEqual({ method, path, fields: [field] });
    }
    expect(await snapshot()).toEqual(before);
  });
});

describe('authentication', () => {
  it('answers 401 to a missing, malformed, forged, expired or incomplete token, writing nothing', async () => {
    const { runId, interaction } = await parkedRun('demo');
    const before = await settled();
    const body = JSON.stringify({ agent: 'demo', task: 'plan' });
    const answer = JSON.stringify({ choice: 1 });
    const json = { 'content-type': 'application/json' };

    const requests = (headers: Record<string, string>): Array<Promise<Reply>> => [
      raw('POST', '/v1/runs', { body, headers: { ...json, ...headers } }),
      raw('GET', `/v1/runs/${runId}`, { headers }),
      raw('GET', '/v1/runs', { headers }),
      raw('POST', `/v1/runs/${runId}/cancel`, { headers }),
      raw('GET', `/v1/interactions/${interaction.id}`, { headers }),
      raw('POST', `/v1/interactions/${interaction.id}/answer`, { body: answer, headers: { ...json, ...headers } }),
      raw('GET', '/v1/agents', { headers }),
    ];

    for (const reply of await Promise.all(requests({}))) {
      expectError(reply, 401, 'unauthenticated', ['missing bearer token']);
    }
    for (const authorization of ['Basic YWxpY2U6c2VjcmV0', 'Bearer', `Token ${stack.token(ALICE)}`]) {
      for (const reply of await Promise.all(requests({ authorization }))) {
        expectError(reply, 401, 'unauthenticated', ['Bearer <jwt>']);
      }
    }
    for (const { name, token, mention } of badTokens()) {
      const replies = await Promise.all(requests({ authorization: `Bearer ${token}` }));
      for (const reply of replies) {
        expect({ name, status: reply.status }).toEqual({ name, status: 401 });
        expectError(reply, 401, 'unauthenticated', [mention]);
      }
    }

    expect(await snapshot()).toEqual(before);
    await expectStillOpen(runId, interaction.id);
    // The health check is the one public route.
    expect(await raw('GET', '/healthz')).toEqual({ status: 200, body: { ok: true } });
  });
});

interface BadAnswer {
  answer: unknown;
  status: 400 | 413 | 422;
  code: ErrorCode;
  field?: string;
  mentions?: string[];
}

/** Bad answers of every sort, per kind, and one good answer to send after them. */
const ANSWER_CASES: Array<{ kind: string; agent: string; bad: BadAnswer[]; good: AnswerBody }> = [
  {
    kind: 'multiple_choice',
    agent: 'demo',
    bad: [
      { answer: { choice: 3 }, status: 422, code: 'invalid_answer', field: 'choice', mentions: ['out of range'] },
      { answer: { choices: [0, 1] }, status: 422, code: 'invalid_answer', field: 'choices', mentions: ['exactly one'] },
      { answer: { choice: 0, choices: [1] }, status: 422, code: 'invalid_answer', field: 'choices', mentions: ['not both'] },
      { answer: {}, status: 422, code: 'invalid_answer', field: 'choice', mentions: ['required'] },
      { answer: { choices: [] }, status: 422, code: 'invalid_answer', field: 'choices' },
      { answer: { text: 'Retreat' }, status: 422, code: 'invalid_answer', field: 'text', mentions: ['not used by multiple_choice interactions'] },
      { answer: { choice: 1, confirmed: true }, status: 422, code: 'invalid_answer', field: 'confirmed' },
      { answer: { choice: -1 }, status: 422, code: 'invalid_answer', field: 'choice' },
      { answer: { choice: 1.5 }, status: 422, code: 'invalid_answer', field: 'choice' },
      { answer: { choice: '1' }, status: 422, code: 'invalid_answer', field: 'choice' },
      { answer: { choice: 1, comment: 'hi' }, status: 422, code: 'invalid_answer', field: 'comment' },
      { answer: [1], status: 422, code: 'invalid_answer' },
    ],
    good: { choice: 1 },
  },
  {
    kind: 'free_text',
    agent: 'ask-text',
    bad: [
      { answer: {}, status: 422, code: 'invalid_answer', field: 'text', mentions: ['required'] },
      { answer: { choice: 0 }, status: 422, code: 'invalid_answer', field: 'choice', mentions: ['not used by free_text interactions'] },
      { answer: { text: 'Lisbon', confirmed: true }, status: 422, code: 'invalid_answer', field: 'confirmed' },
      { answer: { text: 42 }, status: 422, code: 'invalid_answer', field: 'text' },
      { answer: { text: null }, status: 422, code: 'invalid_answer', field: 'text' },
      { answer: { text: 'x'.repeat(100_001) }, status: 422, code: 'invalid_answer', field: 'text' },
    ],
    good: { text: 'Lisbon' },
  },
  {
    kind: 'confirm',
    agent: 'ask-confirm',
    bad: [
      { answer: {}, status: 422, code: 'invalid_answer', field: 'confirmed', mentions: ['required'] },
      { answer: { text: 'yes' }, status: 422, code: 'invalid_answer', field: 'text', mentions: ['not used by confirm interactions'] },
      { answer: { confirmed: true, approved: true }, status: 422, code: 'invalid_answer', field: 'approved' },
      // A value of the wrong type is an answer that does not fit: 422 too.
      { answer: { confirmed: 'yes' }, status: 422, code: 'invalid_answer', field: 'confirmed', mentions: ['expected boolean'] },
      { answer: { confirmed: 1 }, status: 422, code: 'invalid_answer', field: 'confirmed' },
    ],
    good: { confirmed: false },
  },
  {
    kind: 'review',
    agent: 'ask-review',
    bad: [
      { answer: { feedback: 'fine' }, status: 422, code: 'invalid_answer', field: 'approved', mentions: ['required'] },
      { answer: { approved: true, choice: 0 }, status: 422, code: 'invalid_answer', field: 'choice' },
      { answer: { approved: 'yes' }, status: 422, code: 'invalid_answer', field: 'approved' },
      { answer: { approved: true, feedback: 'x'.repeat(20_001) }, status: 422, code: 'invalid_answer', field: 'feedback' },
    ],
    good: { approved: true, feedback: 'Looks good' },
  },
];

describe('answers', () => {
  it.each(ANSWER_CASES)('$kind: a bad answer gets a clear error and leaves the interaction open; then one answer wins', async ({ kind, agent, bad, good }) => {
    const { runId, interaction } = await parkedRun(agent);
    expect(interaction.prompt.kind).toBe(kind);
    const token = stack.token(ALICE);
    const path = `/v1/interactions/${interaction.id}/answer`;
    const before = await settled();

    for (const { answer, status, code, field, mentions } of bad) {
      const reply = await stack.http('POST', path, answer, token);
      expect({ answer, status: reply.status }).toEqual({ answer, status });
      expectError(reply, status, code, [...(field ? [field] : []), ...(mentions ?? [])]);
      if (field) {
        expectIssue(reply, field);
      }
    }
    expectError(await raw('POST', path, { body: '{"choice": 1', headers: bearer(token) }), 400, 'bad_request', ['malformed JSON']);
    expectError(await stack.http('POST', path, { text: 'y'.repeat(600 * 1024) }, token), 413, 'payload_too_large');

    expect(await snapshot()).toEqual(before);
    await expectStillOpen(runId, interaction.id);

    // A valid answer still succeeds...
    const ok = await stack.answer(interaction.id, good, token);
    expect(ok.status).toBe(200);
    expect(ok.body.interaction).toMatchObject({ id: interaction.id, status: 'answered', resolvedBy: { kind: 'user', subject: 'alice' } });

    // ...once: a second answer (the same, by an admin, or one that would not even fit the kind) is a
    // conflict naming who answered.
    for (const [who, second] of [
      [ALICE, good],
      [CAROL, good],
      [ALICE, { confirmed: true, choice: 99, text: 'late' }],
    ] as const) {
      const again = await stack.http('POST', path, second, stack.token(who));
      expectError(again, 409, 'conflict', ['already answered', 'by alice']);
      expect(again.body.error.details).toMatchObject({ status: 'answered', resolvedBy: { kind: 'user', subject: 'alice', role: 'member' } });
    }
    const answers = (await stack.log(runId)).filter((entry) => entry.type === 'answer' && entry.interactionId === interaction.id);
    expect(answers).toHaveLength(1);
  });
});

describe('tenants and owners', () => {
  it("another tenant's member or admin, and a member who does not own the run, get the same 404 as for a missing id", async () => {
    const { runId, interaction } = await parkedRun('demo');
    const before = await settled();

    for (const who of [MALLORY, GLOBEX_ADMIN, BOB]) {
      const token = stack.token(who);
      for (const [method, path] of [
        ['GET', `/v1/runs/${runId}`],
        ['GET', `/v1/runs/${runId}/log`],
        ['GET', `/v1/runs/${runId}/events`],
        ['POST', `/v1/runs/${runId}/cancel`],
      ]) {
        const reply = await stack.http(method, path, undefined, token);
        expect({ who: who.sub, path, ...reply }).toEqual({ who: who.sub, path, status: 404, body: notFound('run', runId) });
      }
      expect(await stack.http('GET', `/v1/interactions/${interaction.id}`, undefined, token)).toEqual({ status: 404, body: notFound('interaction', interaction.id) });
      expect(await stack.answer(interaction.id, { choice: 1 }, token)).toEqual({ status: 404, body: notFound('interaction', interaction.id) });
      // Lists leave them out too.
      expect((await stack.http('GET', '/v1/runs', undefined, token)).body.runs.map((r: any) => r.id)).not.toContain(runId);
      expect((await stack.http('GET', '/v1/interactions', undefined, token)).body.interactions.map((i: any) => i.id)).not.toContain(interaction.id);
      expect((await stack.http('GET', `/v1/interactions?status=all&runId=${runId}`, undefined, token)).body.interactions).toEqual([]);
    }

    expect(await snapshot()).toEqual(before);
    await expectStillOpen(runId, interaction.id);
    // An admin of the run's tenant does see it.
    expect((await stack.http('GET', `/v1/runs/${runId}`, undefined, stack.token(CAROL))).body.interaction.id).toBe(interaction.id);
  });
});

describe('socket.io', () => {
  const clients: TestClient[] = [];
  afterEach(() => clients.splice(0).forEach((client) => client.close()));

  async function connect(claims: { tenant: string; sub: string; role: 'member' | 'admin' }): Promise<TestClient> {
    const client = await stack.connect(stack.token(claims));
    clients.push(client);
    return client;
  }

  function emit(socket: Socket, message: string, body: unknown): Promise<any> {
    return socket.timeout(10_000).emitWithAck(message, body);
  }

  it('refuses a connection with a missing or bad token with connect_error', async () => {
    await expect(connectRaw({})).rejects.toThrow('missing bearer token');
    // An empty token is no token (not a malformed header the client never sent).
    await expect(connectRaw({ token: '' })).rejects.toThrow('missing bearer token');
    for (const { name, token, mention } of badTokens()) {
      const error = await connectRaw({ token }).then(
        () => undefined,
        (e: Error) => e,
      );
      expect({ name, message: error?.message }).toEqual({ name, message: expect.stringContaining(mention) });
    }
  });

  it('acks an error body for a bad subscribe and a bad answer, and the interaction stays open', async () => {
    const { runId, interaction } = await parkedRun('demo');
    const alice = await connect(ALICE);
    const bob = await connect(BOB);
    const mallory = await connect(MALLORY);
    const before = await settled();

    const badSubscribes: Array<[unknown, ErrorCode, string[]]> = [
      [{ since: 0, foo: 1 }, 'validation_failed', ['foo']],
      [{ since: -1 }, 'validation_failed', ['since']],
      [{ since: 'zero' }, 'validation_failed', ['since']],
      [{ runId: 'bad!id' }, 'validation_failed', ['runId']],
      [{ types: [] }, 'validation_failed', ['types']],
      [{ types: ['run.started'] }, 'validation_failed', ['types']],
      ['everything', 'validation_failed', ['subscribe message']],
      [{ runId: randomUUID() }, 'not_found', ['not found']],
    ];
    for (const [body, code, mentions] of badSubscribes) {
      expectError({ body: await emit(alice.socket, 'subscribe', body) }, null, code, mentions);
    }
    // Another tenant, or a member who does not own the run: the same not_found as a missing run.
    expect(await mallory.subscribe({ runId })).toEqual(notFound('run', runId));
    expect(await bob.subscribe({ runId })).toEqual(notFound('run', runId));

    const badAnswers: Array<[unknown, ErrorCode, string[]]> = [
      [{ interactionId: interaction.id }, 'validation_failed', ['answer']],
      [{ interactionId: interaction.id, answer: { choice: 1 }, extra: true }, 'validation_failed', ['extra']],
      [{ interactionId: interaction.id, answer: { choice: 1, note: 'x' } }, 'invalid_answer', ['note']],
      [{ interactionId: interaction.id, answer: 'Retreat' }, 'validation_failed', ['answer']],
      [{ interactionId: 'bad!id', answer: { choice: 1 } }, 'validation_failed', ['interactionId']],
      ['Retreat', 'validation_failed', ['answer message']],
      [null, 'validation_failed', ['answer message']],
      [{ interactionId: interaction.id, answer: { choice: 7 } }, 'invalid_answer', ['choice', 'out of range']],
      [{ interactionId: interaction.id, answer: { choice: 0, choices: [1] } }, 'invalid_answer', ['choices']],
      [{ interactionId: interaction.id, answer: { text: 'Retreat' } }, 'invalid_answer', ['text']],
      [{ interactionId: randomUUID(), answer: { choice: 1 } }, 'not_found', ['not found']],
    ];
    for (const [body, code, mentions] of badAnswers) {
      expectError({ body: await emit(alice.socket, 'answer', body) }, null, code, mentions);
    }
    for (const other of [mallory, bob]) {
      expect(await other.answer(interaction.id, { choice: 1 })).toEqual(notFound('interaction', interaction.id));
    }

    expect(await snapshot()).toEqual(before);
    await expectStillOpen(runId, interaction.id);
    expect([...alice.events, ...bob.events, ...mallory.events]).toEqual([]);

    // The same sockets still work: a valid subscribe, a valid answer, then a conflict for a second one.
    expect(await alice.subscribe({ runId })).toEqual({ ok: true, lastSeq: expect.any(Number), truncated: false });
    expect(await alice.answer(interaction.id, { choice: 2 })).toMatchObject({ ok: true, interaction: { status: 'answered', answer: { labels: ['Party'] } } });
    expectError({ body: await alice.answer(interaction.id, { choice: 1 }) }, null, 'conflict', ['already answered', 'by alice']);
    await alice.waitForEvent((e) => e.type === 'interaction.resolved' && e.runId === runId, 'the resolved event');
    expect(mallory.events).toEqual([]);
  });
});

describe('a since no event can have yet', () => {
  /** A seq of the clock `minutes` from now (seqs count 10 µs units since 2026-01-01, and the tenant's are at least the clock). */
  const clockSeq = (minutes: number) => Math.floor((Date.now() + minutes * 60_000 - Date.UTC(2026, 0, 1)) * 100);

  it('is refused over socket.io, naming since, and the subscription before it goes on; one past the latest seq but not the clock is taken', async () => {
    const alice = await stack.connect(stack.token(ALICE));
    try {
      const live = await alice.subscribe({});
      expect(live).toMatchObject({ ok: true });
      for (const since of [clockSeq(10), Number.MAX_SAFE_INTEGER]) {
        expectError({ body: await alice.socket.timeout(10_000).emitWithAck('subscribe', { since }) }, null, 'validation_failed', ['since', 'past every sequence number']);
      }
      const { runId } = await parkedRun('demo');
      await alice.waitForEvent((e) => e.type === 'interaction.opened' && e.runId === runId, 'the question, live');
      // Past the tenant's latest, as after a restart that lost the newest seqs: the clock has passed it.
      const latest = Math.max(...alice.events.map((e) => e.seq));
      expect(await alice.subscribe({ since: latest + 1 })).toEqual({ ok: true, lastSeq: latest + 1, truncated: false });
    } finally {
      alice.close();
    }
  });

  it('is a 400 naming since on a run\'s events over HTTP', async () => {
    const { runId } = await parkedRun('demo');
    expectError(await stack.http('GET', `/v1/runs/${runId}/events?since=${clockSeq(10)}`, undefined, stack.token(ALICE)), 400, 'validation_failed', ['since']);
    const { body } = await stack.http('GET', `/v1/runs/${runId}/events`, undefined, stack.token(ALICE));
    const last = body.events.at(-1).seq as number;
    expect(await stack.http('GET', `/v1/runs/${runId}/events?since=${last + 1}`, undefined, stack.token(ALICE))).toMatchObject({ status: 200, body: { events: [] } });
  });
});

/** A connection attempt that resolves on connect and rejects with the connect_error. */
async function connectRaw(auth: { token?: string }): Promise<void> {
  const socket = io(`${stack.url}/v1`, { auth, transports: ['websocket'], reconnection: false, forceNew: true });
  try {
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', () => resolve());
      socket.once('connect_error', (error) => reject(error));
    });
  } finally {
    socket.disconnect();
  }
}
