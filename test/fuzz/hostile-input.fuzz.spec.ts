import { createHmac } from 'node:crypto';
import { connect as tcpConnect } from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { io, type Socket } from 'socket.io-client';
import {
  AnswerBodySchema,
  AnswerMessageSchema,
  CreateWebhookBodySchema,
  EnablePowersBodySchema,
  ErrorBodySchema,
  InvalidAnswerError,
  LIMITS,
  MessageBodySchema,
  RunMessageSchema,
  StartRunBodySchema,
  StopMessageSchema,
  UpdateWebhookBodySchema,
  UploadAgentBodySchema,
  WEBHOOK_EVENT_TYPES,
  validateAnswer,
  type ErrorCode,
  type ParleyEvent,
  type Prompt,
} from '@parley/contracts';
import { answerApproval } from '@parley/tools';
import { TenantAgents, parseUploadedAgent } from '@parley/agents';
import { hostOf, isPrivateAddress } from '@parley/store';
import { isIP } from 'node:net';
import { stringify as toYaml } from 'yaml';
import { askerAgent, quickAgent } from '../support/agents';
import { TestStack, writeAgents } from '../support/stack';
import { settledSnapshot, type RedisSnapshot } from '../support/redis-snapshot';
import { waitFor } from '../support/wait-for';

/**
 * Hostile input, property-based: over 20 000 malformed or malicious HTTP requests and socket.io
 * messages (wrong types for every field of every schema, huge strings, invalid UTF-8, lone
 * surrogates, deep nesting, prototype-pollution keys, unknown fields, foreign ids, replayed
 * answers, random routes, methods and events) against one stack. Afterwards: nothing crashed, every
 * reply was a well-formed error (or a 2xx read, or an ok ack of a read), no reply leaked another
 * tenant's or another member's ids, and every Redis key of the deployment is exactly as before.
 *
 * Nothing sent is a valid state-changing request: the owner's bodies are defused (see `defuse`), the
 * owner never stops her live runs, and nobody else can see them. The only deliberately valid
 * answers are replays to an interaction that was answered before the snapshot (409).
 */

const SEED = 0x5eed_2025;
const HTTP_BATCH = 32;
const HTTP_RUNS = 500; // 16 000 requests, about a third to agents/:name, webhooks and operator routes
const SOCKET_BATCH = 40;
const SOCKET_RUNS = 225; // 9 000 messages
const RAW_SESSIONS = 12;
const RAW_ROUNDS = 4;
const RAW_PACKETS = 15; // 720 raw engine.io packets with invalid UTF-8
const FUZZ_TIMEOUT_MS = 180_000;

const ALICE = { tenant: 'acme', sub: 'alice', role: 'member' } as const;
const BOB = { tenant: 'acme', sub: 'bob', role: 'member' } as const;
const MALLORY = { tenant: 'globex', sub: 'mallory', role: 'member' } as const;
const GLOBEX_ADMIN = { tenant: 'globex', sub: 'root', role: 'admin' } as const;
const GLOBEX_SERVICE = { tenant: 'globex', sub: 'svc', role: 'service' } as const;
const ACME_ADMIN = { tenant: 'acme', sub: 'root', role: 'admin' } as const;
/** A platform credential; its tenant claim (the victim's) is ignored, and every tenant route must refuse it. */
const OPERATOR = { tenant: 'acme', sub: 'ops', role: 'operator' } as const;
/** In each tenant agent's description: what the other tenant must never see. */
const ACME_MARKER = 'acme-private-agent-marker';
const GLOBEX_MARKER = 'globex-private-agent-marker';

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** Methods Node's HTTP parser knows and fetch may send; `FOO` and `bar` are refused by the parser itself. */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'PROPFIND', 'MKCOL', 'COPY', 'MOVE', 'LOCK', 'REPORT', 'PURGE', 'SEARCH', 'QUERY', 'FOO', 'bar'];
const ALLOWED_STATUS = new Set([400, 401, 403, 404, 405, 409, 413, 415, 422]);
const STATUS_OF: Record<ErrorCode, number[]> = {
  bad_request: [400, 405],
  validation_failed: [400],
  unauthenticated: [401],
  forbidden: [403],
  not_found: [404],
  conflict: [409],
  invalid_answer: [422],
  payload_too_large: [413],
  unsupported_media_type: [415],
  rate_limited: [],
  unavailable: [],
  internal: [],
};
const SOCKET_EVENTS = ['subscribe', 'answer', 'message', 'stop', 'claim', 'approvals'] as const;
const READ_EVENTS = new Set(['subscribe', 'approvals']);
/** socket.io-client refuses to emit these. */
const RESERVED_EVENTS = new Set(['connect', 'connect_error', 'disconnect', 'disconnecting', 'newListener', 'removeListener']);
const POLLUTION_KEYS = ['__proto__', 'constructor', 'prototype', '__defineGetter__', 'hasOwnProperty', 'toString', 'valueOf', 'isAdmin', 'role', 'tenant'];
const MARK = 'fuzzPolluted';
const LONE_SURROGATES = ['\ud800', '\udfff', 'a\ud83d', '\udc00b', '\ud83d\ude00\ud800', 'x\udbff\udbffy'];
const INVALID_UTF8: number[][] = [[0xff], [0xfe, 0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0x80], [0xe2, 0x82], [0xf8, 0x88, 0x80, 0x80, 0x80]];

type Who =
  | 'alice'
  | 'bob'
  | 'mallory'
  | 'globexAdmin'
  | 'globexService'
  | 'acmeAdmin'
  | 'operator'
  | 'anonymous'
  | 'forged'
  | 'wrongSecret'
  | 'malformed'
  | 'forgedOperator'
  | 'wrongSecretOperator';

interface World {
  run1: string; // alice's, parked on a question (q1)
  q1: string;
  run2: string; // alice's, parked on a tool approval (ap)
  ap: string;
  run3: string; // alice's, finished after q3 was answered
  q3: string;
  acmeHook: string; // acme's webhook endpoint (run.finished)
  acmeDelivery: string; // its one delivery (run3 finished), failed
  globexHook: string;
  globexDelivery: string; // mallory's quick run finished
  helperDigest: string; // acme's tenant agent "helper" (gated powers, not enabled)
  gadgetDigest: string; // globex's tenant agent "gadget" (gated powers, enabled by an operator)
}

let stack: TestStack;
let world: World;
/** The prompts of the two open interactions, by id: the oracle for which answers alice must not send. */
const openPrompts = new Map<string, Prompt>();
/** Errors the answer checks threw other than "invalid answer": the gateway would answer those with a 500. */
const unexpectedOracleErrors: unknown[] = [];
let before: Record<string, string>;
const started = Date.now();
const sent = { http: 0, socket: 0, raw: 0, tcp: 0 };
/** HTTP requests to the tenant-agent, webhook and operator routes. */
let sentToNewRoutes = 0;
/** Requests `defuse` changed (a valid body made invalid, or an own id swapped for a foreign one): shows the defusing is not idle. */
let defused = 0;
const processErrors: unknown[] = [];
const onProcessError = (error: unknown): void => {
  processErrors.push(error);
};
const prototypeKeys = () => [Object, Array, Function, String, Number, Boolean].map((C) => Object.getOwnPropertyNames(C.prototype).sort().join(','));
const prototypesBefore = prototypeKeys();

// ---------------------------------------------------------------------------------------------
// setup

beforeAll(async () => {
  process.on('unhandledRejection', onProcessError);
  process.on('uncaughtException', onProcessError);
  const approver = {
    ...askerAgent('approver', 3600),
    model: {
      provider: 'scripted',
      turns: [{ tool_calls: [{ name: 'write_file', input: { path: 'notes.txt', content: 'hello' } }] }, { tool_calls: [{ name: 'finish', input: { summary: 'ok' } }] }],
    },
    // write_file's default permission is `ask`.
    permissions: {},
  };
  stack = await TestStack.start({
    agentsDir: writeAgents([askerAgent('asker', 3600), approver, quickAgent('quick')]),
    // Private targets stay refused (the default); a delivery fails at its first try, so none is pending during the fuzz.
    // The sweeper's first pass (which also prunes ended runs from the active-run index) comes after the suite.
    // A fuzzed socket subscribes hundreds of times: past its subscribe budget (tenant-limits.e2e) every reply would be the 429.
    overrides: { webhookAllowPrivate: false, webhookAttempts: 1, webhookTimeoutMs: 1000, sweepMs: 3_600_000, limitSocketSubscribesPerMinute: 0 },
  });
  const alice = stack.token(ALICE);
  const [acmeAdmin, globexAdmin] = [stack.token(ACME_ADMIN), stack.token(GLOBEX_ADMIN)];
  // `.invalid` never resolves: accepted when registered, and each delivery fails at once.
  const createHook = async (token: string, url: string) => {
    const reply = await stack.http('POST', '/v1/webhooks', { url, events: ['run.finished'] }, token);
    expect(reply.status).toBe(201);
    return reply.body.webhook.id as string;
  };
  const [acmeHook, globexHook] = await Promise.all([createHook(acmeAdmin, 'https://hooks.invalid/acme'), createHook(globexAdmin, 'https://hooks.invalid/globex')]);
  const upload = async (token: string, name: string, marker: string) => {
    const reply = await stack.http('PUT', `/v1/agents/${name}`, { definition: tenantAgent(name, marker) }, token);
    expect(reply.status).toBe(201);
    expect(reply.body.agent.inertPowers.length).toBeGreaterThan(0);
    return reply.body.agent.digest as string;
  };
  const [helperDigest, gadgetDigest] = await Promise.all([upload(acmeAdmin, 'helper', ACME_MARKER), upload(globexAdmin, 'gadget', GLOBEX_MARKER)]);
  expect((await stack.http('PUT', '/v1/operator/tenants/globex/agents/gadget/powers', { digest: gadgetDigest }, stack.token(OPERATOR))).status).toBe(200);
  const quick = await stack.startRun('quick', 'finish for the webhook', stack.token(MALLORY));
  await waitFor(async () => (await stack.run(quick, stack.token(MALLORY))).run?.status === 'finished' || undefined, { timeoutMs: 20_000, message: "mallory's quick run to finish" });
  const run1 = await stack.startRun('asker', 'park on a question', alice);
  const run2 = await stack.startRun('approver', 'park on an approval', alice);
  const run3 = await stack.startRun('asker', 'answered before the fuzz', alice);
  const [q1, ap, q3] = await Promise.all([stack.waitForQuestion(run1), stack.waitForQuestion(run2), stack.waitForQuestion(run3)]);
  expect(ap.waitReason).toBe('approval');
  expect((await stack.answer(q3.id, { text: 'the first and only answer' }, alice)).status).toBe(200);
  await stack.waitForStatus(run3, 'finished');
  const failedDelivery = (hook: string, token: string) =>
    waitFor(
      async () => {
        const [delivery] = (await stack.http('GET', `/v1/webhooks/${hook}/deliveries`, undefined, token)).body.deliveries as Array<{ id: string; status: string }>;
        return delivery?.status === 'failed' ? delivery.id : undefined;
      },
      { timeoutMs: 20_000, message: `a failed delivery of webhook ${hook}` },
    );
  const [acmeDelivery, globexDelivery] = await Promise.all([failedDelivery(acmeHook, acmeAdmin), failedDelivery(globexHook, globexAdmin)]);
  world = { run1, q1: q1.id, run2, ap: ap.id, run3, q3: q3.id, acmeHook, acmeDelivery: acmeDelivery!, globexHook, globexDelivery: globexDelivery!, helperDigest, gadgetDigest };
  openPrompts.set(q1.id, q1.prompt as Prompt);
  openPrompts.set(ap.id, ap.prompt as Prompt);
  before = await settled();
}, 60_000);

afterAll(async () => {
  process.off('unhandledRejection', onProcessError);
  process.off('uncaughtException', onProcessError);
  await stack?.close();
});

// ---------------------------------------------------------------------------------------------
// Redis snapshot

/**
 * The interaction-service's sweeper is a BullMQ job repeated on a clock: its queue's own keys
 * change every few seconds whatever anyone sends (what it does to runs is in the tenants' keys).
 */
const CLOCK_DRIVEN = /:bull:sweeper:/;
const RATE_WINDOW = /:\{t:[^}]+\}:rate:/;

async function settled(): Promise<RedisSnapshot> {
  const snapshot = await settledSnapshot(stack);
  return Object.fromEntries(Object.entries(snapshot).filter(([key]) => !CLOCK_DRIVEN.test(key)));
}

// ---------------------------------------------------------------------------------------------
// bookkeeping

/** How the replies came out, by status and error code: shows what the fuzz reached. */
const outcomes = { http: new Map<string, number>(), socket: new Map<string, number>() };

function tally(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

function errorCodeOf(text: string): string {
  return /^\{"error":\{"code":"([a-z_]+)"/.exec(text)?.[1] ?? '';
}

function summary(map: Map<string, number>): string {
  return [...map.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, n]) => `${key.trim()}: ${n}`)
    .join(', ');
}

/** Nesting depth of objects and arrays (buffers are leaves), without recursion. */
function depthOf(value: unknown): number {
  let max = 0;
  const pending: Array<[unknown, number]> = [[value, 0]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [current, depth] = next;
    if (current === null || typeof current !== 'object' || Buffer.isBuffer(current)) {
      continue;
    }
    max = Math.max(max, depth + 1);
    for (const child of Array.isArray(current) ? current : Object.values(current)) {
      pending.push([child, depth + 1]);
    }
  }
  return max;
}

// ---------------------------------------------------------------------------------------------
// tokens and ids

function b64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

function authorization(who: Who): string | undefined {
  const now = Math.floor(Date.now() / 1000);
  switch (who) {
    case 'alice':
      return `Bearer ${stack.token(ALICE)}`;
    case 'bob':
      return `Bearer ${stack.token(BOB)}`;
    case 'mallory':
      return `Bearer ${stack.token(MALLORY)}`;
    case 'globexAdmin':
      return `Bearer ${stack.token(GLOBEX_ADMIN)}`;
    case 'globexService':
      return `Bearer ${stack.token(GLOBEX_SERVICE)}`;
    case 'acmeAdmin':
      return `Bearer ${stack.token(ACME_ADMIN)}`;
    case 'operator':
      return `Bearer ${stack.token(OPERATOR)}`;
    case 'forgedOperator':
      return `Bearer ${b64url({ alg: 'none', typ: 'JWT' })}.${b64url({ tenant: 'acme', sub: 'eve', role: 'operator', exp: now + 3600 })}.`;
    case 'wrongSecretOperator': {
      const head = `${b64url({ alg: 'HS256', typ: 'JWT' })}.${b64url({ tenant: 'acme', sub: 'eve', role: 'operator', exp: now + 3600 })}`;
      return `Bearer ${head}.${createHmac('sha256', 'not-the-secret-0123456789').update(head).digest('base64url')}`;
    }
    case 'anonymous':
      return undefined;
    case 'forged':
      // alg none, claiming to be an admin of the victim tenant.
      return `Bearer ${b64url({ alg: 'none', typ: 'JWT' })}.${b64url({ tenant: 'acme', sub: 'eve', role: 'admin', exp: now + 3600 })}.`;
    case 'wrongSecret': {
      const head = `${b64url({ alg: 'HS256', typ: 'JWT' })}.${b64url({ tenant: 'acme', sub: 'eve', role: 'admin', exp: now + 3600 })}`;
      return `Bearer ${head}.${createHmac('sha256', 'not-the-secret-0123456789').update(head).digest('base64url')}`;
    }
    case 'malformed':
      return `Bearer ${stack.token(MALLORY)}.x`;
  }
}

/**
 * What `who` must never read unless the request named it: alice's runs and interactions (only she
 * and her tenant's admin may), each tenant's webhook and delivery ids (only its admin), and each
 * tenant's agent definitions (only its own callers and the operator).
 */
function hiddenFrom(who: Who | 'socket-other'): string[] {
  const runs = [world.run1, world.q1, world.run2, world.ap, world.run3, world.q3];
  const [acmeHooks, globexHooks] = [
    [world.acmeHook, world.acmeDelivery],
    [world.globexHook, world.globexDelivery],
  ];
  switch (who) {
    case 'alice':
      return [...acmeHooks, ...globexHooks, GLOBEX_MARKER];
    case 'bob':
      return [...runs, ...acmeHooks, ...globexHooks, GLOBEX_MARKER];
    case 'acmeAdmin':
      return [...globexHooks, GLOBEX_MARKER];
    case 'globexAdmin':
      return [...runs, ...acmeHooks, ACME_MARKER];
    case 'mallory':
    case 'globexService':
      return [...runs, ...acmeHooks, ...globexHooks, ACME_MARKER];
    case 'operator':
      return [...runs, ...acmeHooks, ...globexHooks];
    case 'anonymous':
    case 'forged':
    case 'wrongSecret':
    case 'malformed':
    case 'forgedOperator':
    case 'wrongSecretOperator':
    case 'socket-other':
      return [...runs, ...acmeHooks, ...globexHooks, ACME_MARKER, GLOBEX_MARKER];
  }
}

/** A stand-in chosen at generation time, resolved against `world` once the stack is up. */
type IdRef = { ref: keyof World } | { literal: string };

const runRef = fc.constantFrom<keyof World>('run1', 'run2', 'run3').map((ref): IdRef => ({ ref }));
const interactionRef = fc.constantFrom<keyof World>('q1', 'ap', 'q3').map((ref): IdRef => ({ ref }));
const webhookRef = fc.constantFrom<keyof World>('acmeHook', 'globexHook').map((ref): IdRef => ({ ref }));
const deliveryRef = fc.constantFrom<keyof World>('acmeDelivery', 'globexDelivery').map((ref): IdRef => ({ ref }));
const digestRef = fc.constantFrom<keyof World>('helperDigest', 'gadgetDigest').map((ref): IdRef => ({ ref }));
const badIds = fc.constantFrom(
  '',
  'bad!id',
  'x'.repeat(65),
  '..',
  '.',
  '../../etc/passwd',
  '%',
  '%zz',
  '%00',
  '%C0%AF',
  '%E0%A4%A',
  '%ED%A0%80',
  'a b',
  'a/b',
  'a?b=1',
  'a#b',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  '🙂',
  '\u0000',
  ...LONE_SURROGATES,
);
const idArb: fc.Arbitrary<IdRef> = fc.oneof(
  { weight: 4, arbitrary: runRef },
  { weight: 4, arbitrary: interactionRef },
  { weight: 1, arbitrary: fc.oneof(webhookRef, deliveryRef) },
  { weight: 2, arbitrary: fc.uuid().map((literal): IdRef => ({ literal })) },
  { weight: 3, arbitrary: badIds.map((literal): IdRef => ({ literal })) },
  { weight: 1, arbitrary: fc.string({ maxLength: 80 }).map((literal): IdRef => ({ literal })) },
);

// ---------------------------------------------------------------------------------------------
// values

/** An object with `key` as an own, enumerable data property, even for `__proto__`. */
function withOwn(target: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...target };
  Object.defineProperty(copy, key, { value, enumerable: true, writable: true, configurable: true });
  return copy;
}

/** Defers building a big value to send time, and prints short in fast-check's reports. */
class Lazy {
  constructor(
    readonly label: string,
    readonly make: () => unknown,
  ) {}
  [fc.toStringMethod](): string {
    return `Lazy(${this.label})`;
  }
}

function materialize(value: unknown, depth = 0): unknown {
  if (value instanceof Lazy) {
    return value.make();
  }
  if (depth > 3 || value === null || typeof value !== 'object' || Buffer.isBuffer(value)) {
    return value;
  }
  if (Array.isArray(value)) {
    return value.map((item) => materialize(item, depth + 1));
  }
  let out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    out = withOwn(out, key, materialize(item, depth + 1));
  }
  return out;
}

function deepValue(depth: number, shape: 'array' | 'object'): unknown {
  let value: unknown = shape === 'array' ? [] : { leaf: 1 };
  for (let i = 1; i < depth; i++) {
    value = shape === 'array' ? [value] : { a: value };
  }
  return value;
}

const pollutionValue = fc.constantFrom<unknown>({ [MARK]: true }, { prototype: { [MARK]: true } }, { isAdmin: true, role: 'admin', tenant: 'acme' }, [MARK], MARK);
const pollutionObject = fc.tuple(fc.constantFrom(...POLLUTION_KEYS), pollutionValue).map(([key, value]) => withOwn({}, key, value));

const weirdString = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      ...LONE_SURROGATES,
      '',
      ' ',
      '   \n\t ',
      '\u0000',
      '\u202e',
      '\ufeff',
      '🙂'.repeat(5),
      '${jndi:ldap://x}',
      '<script>alert(1)</script>',
      "' OR 1=1 --",
      '../../etc/passwd',
      '%00',
      'null',
      'NaN',
      '__proto__',
      'constructor',
      'asker',
      'approver',
    ),
  },
  { weight: 1, arbitrary: fc.integer({ min: 100, max: 25_000 }).map((n) => new Lazy(`y x ${n}`, () => 'y'.repeat(n))) },
);
const weirdNumber = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(-1, -0, 0, 1, 1.5, 2 ** 31, 2 ** 53, 2 ** 53 + 2, 1e21, 1e308, -1e308, Number.MIN_VALUE, Number.MAX_SAFE_INTEGER),
);
const anyJson = fc.jsonValue({ maxDepth: 3 });
/** Bytes each repetition costs once JSON-encoded as UTF-8 (a lone surrogate is escaped: `\ud800`). */
const HUGE_UNITS: Array<[string, number]> = [
  ['x', 1],
  ['é', 2],
  ['🙂', 4],
  ['\ud800', 6],
];
/** A string of about `min`..`max` bytes on the wire, built at send time. */
const hugeString = (min: number, max: number) =>
  fc.tuple(fc.integer({ min, max }), fc.constantFrom(...HUGE_UNITS)).map(([bytes, [unit, cost]]) => new Lazy(`${JSON.stringify(unit)} x ${Math.floor(bytes / cost)}`, () => unit.repeat(Math.floor(bytes / cost))));
/** Deep values for socket payloads and answer inputs; not deeper, as socket.io-client's encoder recurses. */
const deepArb = fc
  .tuple(fc.constantFrom(31, 32, 33, 34, 64, 500, 1500), fc.constantFrom<'array' | 'object'>('array', 'object'))
  .map(([depth, shape]) => new Lazy(`${shape} nested ${depth} deep`, () => deepValue(depth, shape)));
const hostile: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: weirdString },
  { weight: 2, arbitrary: weirdNumber },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 3, arbitrary: anyJson },
  { weight: 2, arbitrary: pollutionObject },
  { weight: 1, arbitrary: fc.array(weirdNumber, { maxLength: 120 }) },
  { weight: 2, arbitrary: idArb },
);

// ---------------------------------------------------------------------------------------------
// tenant agents and webhooks

/** A valid tenant agent that grants itself a gated power (`allow` on write_file). */
function tenantAgent(name: string, description = 'uploaded by the fuzz'): Record<string, unknown> {
  return { name, description, model: { provider: 'scripted', turns: [{ text: 'hi' }] }, tools: ['write_file', 'finish'], permissions: { write_file: 'allow' } };
}

const AGENT_NAMES = ['helper', 'gadget', 'newbie', 'asker', 'quick', 'no-such-agent', 'Helper', 'a'.repeat(65), 'bad name', '__proto__', 'constructor', 'toString'];
const agentNameArb = fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...AGENT_NAMES) }, { weight: 1, arbitrary: badIds }, { weight: 1, arbitrary: fc.string({ maxLength: 20 }) });
const DEFINITION_KEYS = ['name', 'description', 'model', 'tools', 'permissions', 'schedules', 'delegates', 'stages', 'limits', 'http', 'safe_commands', 'unattended_approval', 'system'];
/** One tool call's `input`: the one place of a definition that takes any JSON (so any depth, keys and cycles). */
const withInput = (name: string, input: unknown) => ({ ...tenantAgent(name), model: { provider: 'scripted', turns: [{ tool_calls: [{ name: 'finish', input }] }] } });

const definitionArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...AGENT_NAMES).map((name) => tenantAgent(name)) },
  {
    weight: 4,
    arbitrary: fc
      .tuple(fc.constantFrom(...AGENT_NAMES), fc.constantFrom(...DEFINITION_KEYS, ...POLLUTION_KEYS), fc.oneof(hostile, pollutionObject, fc.constantFrom<unknown>('anthropic', ['shell'], ['asker'], [{ cron: '* * * * *' }])))
      .map(([name, key, value]) => withOwn(tenantAgent(name), key, value)),
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.constantFrom('helper', 'gadget', 'newbie'), fc.oneof(pollutionObject, fc.dictionary(fc.constantFrom(...POLLUTION_KEYS), anyJson, { maxKeys: 3 })))
      .map(([name, input]) => withInput(name, input)),
  },
  { weight: 1, arbitrary: fc.constantFrom(31, 40, 200).map((depth) => new Lazy(`definition, input nested ${depth} deep`, () => withInput('newbie', deepValue(depth, 'object')))) },
  { weight: 2, arbitrary: hostile },
);

/** "Billion laughs": each level aliases the previous one `width` times. */
function aliasBomb(levels: number, width: number, name = 'newbie'): string {
  const lines = [`name: ${name}`, 'model: {provider: scripted, turns: [{text: hi}]}', `l0: &l0 [${Array(width).fill('"lol"').join(', ')}]`];
  for (let i = 1; i < levels; i++) {
    lines.push(`l${i}: &l${i} [${Array(width).fill(`*l${i - 1}`).join(', ')}]`);
  }
  return lines.join('\n');
}

/** YAML that parses to a cycle (an alias inside its own anchor), where the schema takes any value. */
const CYCLIC_YAML = [
  'name: newbie\nmodel: {provider: scripted, turns: [{tool_calls: [{name: finish, input: &a {self: *a}}]}]}',
  'name: newbie\nmodel: {provider: scripted, turns: [{tool_calls: [{name: finish, input: {list: &b [*b]}}]}]}',
  'name: newbie\nmodel: &m {provider: scripted, turns: [{text: hi}], again: *m}',
  '&root {name: newbie, model: {provider: scripted, turns: [{text: hi}]}, me: *root}',
];

const yamlArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...AGENT_NAMES).map((name) => toYaml(tenantAgent(name))) },
  { weight: 2, arbitrary: fc.tuple(fc.integer({ min: 3, max: 12 }), fc.integer({ min: 2, max: 12 })).map(([levels, width]) => new Lazy(`alias bomb ${levels}x${width}`, () => aliasBomb(levels, width))) },
  { weight: 2, arbitrary: fc.constantFrom(...CYCLIC_YAML) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      'name: newbie\n__proto__: {isAdmin: true}\nmodel: {provider: scripted, turns: [{text: hi}]}',
      'name: newbie\nmodel: {provider: scripted, turns: [{tool_calls: [{name: finish, input: {__proto__: {fuzzPolluted: true}, constructor: {prototype: {fuzzPolluted: true}}}}]}]}',
      'base: &base {provider: scripted, turns: [{text: hi}]}\nname: newbie\nmodel: {<<: *base}',
      'name: !!js/function "function () { return 1 }"\nmodel: {provider: scripted}',
      'name: !!binary aGVsbG8=\nmodel: !!set {a, b}',
      'name: newbie\nmodel: {provider: scripted, turns: [{text: *undefined_alias}]}',
      '--- a\n--- b\n',
      '%YAML 1.1\n---\nname: newbie',
      '? [complex, key]\n: value',
      'name: newbie\nname: helper\n',
      '{',
      '\t- tab',
      '',
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom(100, 700, 2000, 20_000).map((depth) => new Lazy(`yaml flow nested ${depth} deep`, () => `name: newbie\nx: ${'['.repeat(depth)}${']'.repeat(depth)}`)) },
  { weight: 1, arbitrary: fc.integer({ min: 60_000, max: 70_000 }).map((n) => new Lazy(`yaml of ${n} chars`, () => `name: newbie\ndescription: "${'y'.repeat(n)}"\nmodel: {provider: scripted, turns: [{text: hi}]}`)) },
  { weight: 2, arbitrary: weirdString },
);

const PUBLIC_URLS = ['https://hooks.invalid/new', 'https://example.com/parley', 'https://93.184.215.14/hook', 'http://[2606:4700::1]/x'];
/** Where a webhook must not point (the default PARLEY_WEBHOOK_ALLOW_PRIVATE=false); WHATWG URL spellings included. */
const PRIVATE_URLS = [
  'http://169.254.169.254/latest/meta-data/',
  'http://[::ffff:169.254.169.254]/',
  'http://0xa9fea9fe/',
  'http://2852039166/',
  'http://169.254.169.254./',
  'http://127.0.0.1:6379/',
  'http://127.1/',
  'http://0/',
  'http://[::1]/',
  'http://[::]/',
  'http://10.0.0.1/',
  'http://192.168.1.1/',
  'http://100.64.0.1/',
  'http://[fd00::1]/',
  'http://[fe80::1]/',
  'http://localhost/',
  'http://LOCALHOST./',
  'http://api.localhost/',
];
const BAD_URLS = ['ftp://x.example/', 'javascript:alert(1)', 'file:///etc/passwd', 'http://user:pw@x.example/', 'https://x.example/#frag', 'http://', '//x.example', 'x.example', '', '   ', `https://x.example/${'a'.repeat(2100)}`, 'http://[::1', 'gopher://127.0.0.1:6379/_FLUSHALL'];
const urlArb = fc.oneof(fc.constantFrom(...PUBLIC_URLS), fc.constantFrom(...PRIVATE_URLS), fc.constantFrom(...BAD_URLS), weirdString);
const eventsArb = fc.oneof(
  fc.subarray([...WEBHOOK_EVENT_TYPES], { minLength: 1 }),
  fc.array(fc.oneof(fc.constantFrom(...WEBHOOK_EVENT_TYPES), fc.constantFrom('run.started', 'RUN.FINISHED', '*', '', '__proto__')), { maxLength: 12 }),
  fc.constantFrom<unknown>([], 'run.finished', ['run.finished', 'run.finished']),
);
const digestArb = fc.oneof(
  { weight: 3, arbitrary: digestRef },
  { weight: 2, arbitrary: fc.uint8Array({ minLength: 32, maxLength: 32 }).map((bytes) => Buffer.from(bytes).toString('hex')) },
  { weight: 1, arbitrary: fc.constantFrom('0'.repeat(64), 'A'.repeat(64), 'f'.repeat(63), 'g'.repeat(64), `${'a'.repeat(64)}\n`) },
  { weight: 1, arbitrary: weirdString },
);

/** Plausible values for each field of each schema (right and wrong); `hostile` mixes in the rest. */
const FIELD: Record<string, fc.Arbitrary<unknown>> = {
  agent: fc.constantFrom('asker', 'approver', 'demo', 'no-such-agent', 'Asker', 'a'.repeat(70), 'bad name'),
  task: fc.oneof(fc.constantFrom('do the thing', '', '   '), weirdString),
  unattended: fc.oneof(fc.boolean(), fc.constantFrom('true', 1, 0)),
  trigger: fc.constantFrom('api', 'chat', 'webhook', 'cron', 'API', ''),
  onBehalfOf: fc.oneof(fc.constantFrom('alice', 'mallory', ''), weirdString),
  text: weirdString,
  feedback: weirdString,
  reason: weirdString,
  choice: fc.oneof(fc.integer({ min: -2, max: 5 }), weirdNumber),
  choices: fc.array(fc.oneof(fc.integer({ min: -1, max: 4 }), weirdNumber), { maxLength: 150 }),
  confirmed: fc.oneof(fc.boolean(), fc.constantFrom('yes', 1)),
  approved: fc.oneof(fc.boolean(), fc.constantFrom('yes', 1)),
  decision: fc.constantFrom('allow_once', 'allow_stage', 'allow_run', 'deny', 'allow', 'yes', ''),
  input: fc.oneof(fc.dictionary(fc.string({ maxLength: 8 }), anyJson, { maxKeys: 4 }), pollutionObject, fc.constant({ path: '../../etc/passwd', content: 'x' }), deepArb),
  directory: fc.oneof(fc.constantFrom('', '/', '../', '/etc', 'notes/'), weirdString),
  status: fc.constantFrom('open', 'all', 'waiting', 'finished', 'queued', 'bogus', ''),
  limit: fc.oneof(fc.integer({ min: -5, max: 6000 }), weirdNumber),
  // Listing cursors: well-formed ones naming nothing, ones of another listing, and junk.
  after: fc.oneof(fc.constantFrom('1700000000000.0', '8641795000000000.some-id', '12', '0', '99999999999999999.x', '1.2.3', '.x', '-1', ''), weirdString),
  since: fc.oneof(fc.integer({ min: -5, max: 100 }), weirdNumber),
  tool: fc.oneof(fc.constantFrom('write_file', 'ask_user_text', ''), weirdString),
  release: fc.oneof(fc.boolean(), fc.constantFrom('true', 1)),
  runId: fc.oneof(runRef, idArb),
  interactionId: fc.oneof(interactionRef, idArb),
  answer: fc.constant(null), // filled below: an answer body
  definition: definitionArb,
  yaml: yamlArb,
  url: urlArb,
  events: eventsArb,
  enabled: fc.oneof(fc.boolean(), fc.constantFrom('false', 0, null)),
  description: fc.oneof(weirdString, fc.constant('d'.repeat(501)), fc.constant('')),
  digest: digestArb,
};

const SCHEMA_FIELDS = {
  start: ['agent', 'task', 'unattended', 'trigger', 'onBehalfOf'],
  message: ['text'],
  answer: ['text', 'choice', 'choices', 'confirmed', 'approved', 'feedback', 'decision', 'reason', 'input', 'directory'],
  listRuns: ['status', 'limit', 'after'],
  listInteractions: ['status', 'runId', 'limit', 'after'],
  events: ['since', 'limit'],
  approvals: ['agent', 'tool', 'runId', 'limit', 'after'],
  safeCommands: ['agent'],
  subscribe: ['since', 'runId'],
  answerMessage: ['interactionId', 'answer'],
  claim: ['interactionId', 'release'],
  runMessage: ['runId', 'text'],
  stop: ['runId'],
  upload: ['definition', 'yaml'],
  createWebhook: ['url', 'events', 'description'],
  updateWebhook: ['url', 'events', 'enabled', 'description'],
  enablePowers: ['digest'],
  deliveries: ['limit'],
} as const;

/** An object of some of `fields` (each plausible or hostile) plus maybe unknown or pollution keys. */
function objectOf(fields: readonly string[], field: (name: string) => fc.Arbitrary<unknown>): fc.Arbitrary<Record<string, unknown>> {
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const name of fields) {
    model[name] = fc.oneof({ weight: 3, arbitrary: field(name) }, { weight: 1, arbitrary: hostile });
  }
  const extraKey = fc.oneof(fc.constantFrom(...POLLUTION_KEYS), fc.string({ maxLength: 12 }), fc.constantFrom('Text', 'TEXT', 'text ', 'runid', 'extra'));
  return fc
    .tuple(fc.record(model, { requiredKeys: [] }), fc.array(fc.tuple(extraKey, hostile), { maxLength: 2 }))
    .map(([base, extras]) => extras.reduce((obj, [key, value]) => withOwn(obj, key, value), base as Record<string, unknown>));
}

const answerBody = objectOf(SCHEMA_FIELDS.answer, (name) => FIELD[name]);
const fieldWithAnswer = (name: string): fc.Arbitrary<unknown> => (name === 'answer' ? fc.oneof({ weight: 4, arbitrary: answerBody }, { weight: 1, arbitrary: hostile }) : FIELD[name]);

// ---------------------------------------------------------------------------------------------
// HTTP cases

type BodySpec =
  | { kind: 'none' }
  | { kind: 'json'; value: unknown }
  | { kind: 'text'; text: string }
  | { kind: 'bytes'; bytes: number[] }
  | { kind: 'huge'; size: number; wrap: 'text' | 'task' | 'raw' }
  | { kind: 'deep'; depth: number; shape: 'array' | 'object'; under?: string };

type Encoding = 'gzip' | 'deflate' | 'br' | 'identity' | 'garbage-gzip' | 'zzz';

interface HttpCase {
  label: string;
  who: Who;
  method: string;
  path: string;
  body: BodySpec;
  contentType?: string;
  encoding?: Encoding;
  /** A deliberately valid answer to an interaction answered before the fuzz. */
  replay?: boolean;
  /** The exact outcome, when the case has one (`field`: an issue in `details.issues` names it). */
  expect?: { status: number; code?: ErrorCode; mentions?: string; field?: string };
}

type Route = { method: string; path: (id: string) => string; id?: 'run' | 'interaction' | 'any'; body?: keyof typeof SCHEMA_FIELDS; query?: keyof typeof SCHEMA_FIELDS };

const ROUTES: Route[] = [
  { method: 'GET', path: () => '/healthz' },
  { method: 'GET', path: () => '/v1/agents' },
  { method: 'GET', path: () => '/v1/schedules' },
  { method: 'POST', path: () => '/v1/runs', body: 'start' },
  { method: 'GET', path: () => '/v1/runs', query: 'listRuns' },
  { method: 'GET', path: (id) => `/v1/runs/${id}`, id: 'run' },
  { method: 'GET', path: (id) => `/v1/runs/${id}/events`, id: 'run', query: 'events' },
  { method: 'GET', path: (id) => `/v1/runs/${id}/log`, id: 'run' },
  { method: 'GET', path: (id) => `/v1/runs/${id}/audit`, id: 'run' },
  { method: 'POST', path: (id) => `/v1/runs/${id}/stop`, id: 'run' },
  { method: 'POST', path: (id) => `/v1/runs/${id}/cancel`, id: 'run' },
  { method: 'POST', path: (id) => `/v1/runs/${id}/messages`, id: 'run', body: 'message' },
  { method: 'GET', path: () => '/v1/interactions', query: 'listInteractions' },
  { method: 'GET', path: (id) => `/v1/interactions/${id}`, id: 'interaction' },
  { method: 'POST', path: (id) => `/v1/interactions/${id}/answer`, id: 'interaction', body: 'answer' },
  { method: 'GET', path: () => '/v1/approvals', query: 'approvals' },
  { method: 'GET', path: () => '/v1/approvals/safe-commands', query: 'safeCommands' },
  { method: 'POST', path: (id) => `/v1/approvals/${id}/claim`, id: 'interaction' },
  { method: 'DELETE', path: (id) => `/v1/approvals/${id}/claim`, id: 'interaction' },
];

const whoArb = fc.constantFrom<Who>('alice', 'alice', 'bob', 'mallory', 'mallory', 'globexAdmin', 'globexService', 'operator', 'anonymous', 'forged', 'wrongSecret', 'malformed', 'forgedOperator');
const foreignWho = fc.constantFrom<Who>('bob', 'mallory', 'globexAdmin', 'globexService');

function encodeSegment(raw: string, mode: number): string {
  if (mode === 0) {
    return raw; // as is: fetch's URL parser escapes what it must
  }
  try {
    return encodeURIComponent(raw);
  } catch {
    return raw.replace(/[\ud800-\udfff]/g, '%ED%A0%80'); // lone surrogate: its (invalid) UTF-8 bytes
  }
}

const queryArb = (schema: keyof typeof SCHEMA_FIELDS | undefined): fc.Arbitrary<string> => {
  const names: readonly string[] = schema ? SCHEMA_FIELDS[schema] : [];
  const key = fc.oneof(
    { weight: 4, arbitrary: names.length > 0 ? fc.constantFrom(...names) : fc.constant('limit') },
    { weight: 1, arbitrary: fc.constantFrom(...POLLUTION_KEYS, 'status[a]', 'limit[]', 'a[__proto__][x]', '__proto__[role]', 'constructor[prototype][x]') },
    { weight: 1, arbitrary: fc.string({ maxLength: 10 }) },
  );
  const value = fc.oneof(
    { weight: 3, arbitrary: fc.oneof(...names.map((n) => FIELD[n]), fc.constant('1')).map(queryValue) },
    { weight: 2, arbitrary: weirdString.map(queryValue) },
    { weight: 1, arbitrary: idArb.map(resolveIdLater) },
  );
  return fc
    .array(fc.tuple(key, value, fc.integer({ min: 0, max: 3 })), { maxLength: 5 })
    // Kept under Node's 16 KiB header limit (that one has its own test below).
    .map((pairs) => pairs.map(([k, v, mode]) => `${encodeSegment(k, mode)}=${encodeSegment(v, mode)}`).join('&').slice(0, 6000));
};

/** Any generated value as query text (objects with an own `toString` key cannot go through `String`). */
function queryValue(value: unknown): string {
  if (isPlainObject(value) && Object.keys(value).length === 1 && ('ref' in value || 'literal' in value)) {
    return resolveIdLater(value as IdRef);
  }
  const made = materialize(value);
  return typeof made === 'string' ? made : (JSON.stringify(made) ?? 'undefined');
}

/** Query strings are built at generation time, when the world is not known yet: ids are placeholders. */
function resolveIdLater(id: IdRef): string {
  return 'ref' in id ? `{{${id.ref}}}` : id.literal;
}

function fillIds(text: string): string {
  return text.replace(/\{\{([A-Za-z0-9]+)\}\}|%7B%7B([A-Za-z0-9]+)%7D%7D/g, (match, ref?: string, encoded?: string) => {
    const key = (ref ?? encoded)!;
    return Object.hasOwn(world, key) ? world[key as keyof World] : match;
  });
}

function bodyArb(schema: keyof typeof SCHEMA_FIELDS | undefined): fc.Arbitrary<BodySpec> {
  const fields: readonly string[] = schema ? SCHEMA_FIELDS[schema] : SCHEMA_FIELDS.answer;
  const object = objectOf(fields, fieldWithAnswer);
  return fc.oneof(
    { weight: 12, arbitrary: object.map((value): BodySpec => ({ kind: 'json', value: resolveRefs(value) })) },
    { weight: 3, arbitrary: hostile.map((value): BodySpec => ({ kind: 'json', value: resolveRefs(value) })) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(object, fc.constantFrom('truncate', 'trailing', 'single-quotes', 'nan', 'comment', 'dup-key', 'bom'))
        .map(([value, how]): BodySpec => ({ kind: 'text', text: malformed(JSON.stringify(value) ?? '{}', how) })),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.constantFrom(...fields), fc.constantFrom(...INVALID_UTF8), fc.constantFrom('key', 'value', 'raw'))
        .map(([field, bad, where]): BodySpec => ({ kind: 'bytes', bytes: invalidUtf8Json(field, bad, where) })),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.constantFrom(...fields), fc.constantFrom('\\ud800', '\\udfff', 'a\\ud83d', '\\udc00\\ud800'))
        .map(([field, escape]): BodySpec => ({ kind: 'text', text: `{"${field}":"${escape}"}` })),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.constantFrom(31, 32, 33, 40, 1000, 100_000), fc.constantFrom<'array' | 'object'>('array', 'object'), fc.constantFrom(undefined, 'input', 'task', 'text'))
        .map(([depth, shape, under]): BodySpec => ({ kind: 'deep', depth, shape, ...(under ? { under } : {}) })),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.integer({ min: LIMITS.bodyBytes - 2048, max: LIMITS.bodyBytes + 90_000 }), fc.constantFrom<'text' | 'task' | 'raw'>('text', 'task', 'raw'))
        .map(([size, wrap]): BodySpec => ({ kind: 'huge', size, wrap })),
    },
    { weight: 2, arbitrary: pollutionObject.map((value): BodySpec => ({ kind: 'json', value })) },
    { weight: 2, arbitrary: fc.constant<BodySpec>({ kind: 'none' }) },
  );
}

function malformed(json: string, how: string): string {
  switch (how) {
    case 'truncate':
      return json.slice(0, Math.max(1, json.length - 1));
    case 'trailing':
      return `${json} x`;
    case 'single-quotes':
      return json.replace(/"/g, "'");
    case 'nan':
      return '{"limit": NaN, "text": undefined}';
    case 'comment':
      return `/* hi */ ${json}`;
    case 'dup-key':
      return '{"text": "a", "text": 1, "__proto__": {"x": 1}, "__proto__": 2}';
    default:
      return `\ufeff${json}`;
  }
}

function invalidUtf8Json(field: string, bad: number[], where: string): number[] {
  const ascii = (s: string) => [...Buffer.from(s, 'utf8')];
  switch (where) {
    case 'key':
      return [...ascii('{"'), ...bad, ...ascii(`":1,"${field}":"x"}`)];
    case 'value':
      return [...ascii(`{"${field}":"a`), ...bad, ...ascii('b"}')];
    default:
      return [...ascii(`{"${field}":`), ...bad, ...ascii('}')];
  }
}

const contentTypeArb = fc.oneof(
  { weight: 14, arbitrary: fc.constant('application/json') },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'application/json; charset=utf-8',
      'application/json; charset=utf-16le',
      'application/json; charset=latin1',
      'application/json; charset=',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/vnd.api+json',
      '*/*',
      'application/json, text/plain',
    ),
  },
  { weight: 1, arbitrary: fc.constant(undefined) },
);
const encodingArb = fc.oneof(
  { weight: 20, arbitrary: fc.constant(undefined) },
  { weight: 2, arbitrary: fc.constantFrom<Encoding>('gzip', 'deflate', 'br', 'identity', 'garbage-gzip', 'zzz') },
);

/** The routes, by the book or with another method, any id and hostile bodies and queries. */
const routeCase: fc.Arbitrary<HttpCase> = fc
  .tuple(fc.constantFrom(...ROUTES), fc.oneof({ weight: 4, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.constantFrom(...METHODS) }), idArb, fc.integer({ min: 0, max: 3 }), whoArb, contentTypeArb, encodingArb)
  .chain(([route, method, id, mode, who, contentType, encoding]) =>
    fc.tuple(bodyArb(route.body), queryArb(route.query ?? route.body)).map(([body, query]): HttpCase => {
      const idText = resolveIdLater(id);
      return {
        label: `route ${route.method} ${route.path(':id')}`,
        who,
        method: method ?? route.method,
        path: `${route.path(encodeSegment(idText, mode))}${query ? `?${query}` : ''}`,
        body,
        ...(contentType ? { contentType } : {}),
        ...(encoding ? { encoding } : {}),
      };
    }),
  );

/**
 * Tenant agents, webhooks and the operator's routes. `:hook`, `:delivery`, `:name` and `:tenant`
 * are filled per case. The tenants' admins and the operator are among the callers: `defuse` keeps
 * what they send from being a valid change.
 */
interface NewRoute {
  method: string;
  path: string;
  body?: keyof typeof SCHEMA_FIELDS;
  query?: keyof typeof SCHEMA_FIELDS;
}

const NEW_ROUTES: NewRoute[] = [
  { method: 'GET', path: '/v1/agents/:name' },
  { method: 'PUT', path: '/v1/agents/:name', body: 'upload' },
  { method: 'PUT', path: '/v1/agents/:name', body: 'upload' },
  { method: 'DELETE', path: '/v1/agents/:name' },
  { method: 'POST', path: '/v1/webhooks', body: 'createWebhook' },
  { method: 'GET', path: '/v1/webhooks' },
  { method: 'GET', path: '/v1/webhooks/:hook' },
  { method: 'PATCH', path: '/v1/webhooks/:hook', body: 'updateWebhook' },
  { method: 'DELETE', path: '/v1/webhooks/:hook' },
  { method: 'POST', path: '/v1/webhooks/:hook/rotate-secret' },
  { method: 'GET', path: '/v1/webhooks/:hook/deliveries', query: 'deliveries' },
  { method: 'GET', path: '/v1/webhooks/deliveries/:delivery' },
  { method: 'POST', path: '/v1/webhooks/deliveries/:delivery/replay' },
  { method: 'GET', path: '/v1/operator/tenants/:tenant/agents' },
  { method: 'GET', path: '/v1/operator/tenants/:tenant/agents/:name/powers' },
  { method: 'PUT', path: '/v1/operator/tenants/:tenant/agents/:name/powers', body: 'enablePowers' },
  { method: 'DELETE', path: '/v1/operator/tenants/:tenant/agents/:name/powers' },
];

const newWhoArb = fc.constantFrom<Who>(
  'acmeAdmin',
  'acmeAdmin',
  'globexAdmin',
  'globexAdmin',
  'operator',
  'operator',
  'alice',
  'bob',
  'mallory',
  'globexService',
  'anonymous',
  'forged',
  'forgedOperator',
  'wrongSecretOperator',
  'malformed',
);
const hookIdArb = fc.oneof({ weight: 4, arbitrary: webhookRef }, { weight: 1, arbitrary: deliveryRef }, { weight: 3, arbitrary: idArb });
const deliveryIdArb = fc.oneof({ weight: 4, arbitrary: deliveryRef }, { weight: 1, arbitrary: webhookRef }, { weight: 3, arbitrary: idArb });
const tenantArb = fc.oneof({ weight: 5, arbitrary: fc.constantFrom('acme', 'globex', 'initech', 'ACME', 'acme ', '__proto__', 'a'.repeat(65)) }, { weight: 1, arbitrary: badIds });

function fillRoute(path: string, params: { hook: string; delivery: string; name: string; tenant: string }, mode: number): string {
  return path.replace(/:(hook|delivery|name|tenant)/g, (_, key: keyof typeof params) => encodeSegment(params[key], mode));
}

const newRouteCase: fc.Arbitrary<HttpCase> = fc
  .tuple(
    fc.constantFrom(...NEW_ROUTES),
    fc.oneof({ weight: 6, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.constantFrom(...METHODS) }),
    fc.record({ hook: hookIdArb.map(resolveIdLater), delivery: deliveryIdArb.map(resolveIdLater), name: agentNameArb, tenant: tenantArb }),
    fc.integer({ min: 0, max: 3 }),
    newWhoArb,
    contentTypeArb,
    encodingArb,
  )
  .chain(([route, method, params, mode, who, contentType, encoding]) =>
    fc.tuple(bodyArb(route.body), queryArb(route.query ?? route.body)).map(
      ([body, query]): HttpCase => ({
        label: `new route ${route.method} ${route.path}`,
        who,
        method: method ?? route.method,
        path: `${fillRoute(route.path, params, mode)}${query ? `?${query}` : ''}`,
        body,
        ...(contentType ? { contentType } : {}),
        ...(encoding ? { encoding } : {}),
      }),
    ),
  );

const json = (value: unknown): BodySpec => ({ kind: 'json', value });
const OTHER_TENANT = { acmeAdmin: 'globex', globexAdmin: 'acme' } as const;
const WEBHOOK_ROUTES = NEW_ROUTES.filter((r) => r.path.startsWith('/v1/webhooks'));
const OPERATOR_ROUTES = NEW_ROUTES.filter((r) => r.path.startsWith('/v1/operator'));

/** Requests of the new routes whose outcome is known exactly. */
const newExactCase: fc.Arbitrary<HttpCase> = fc.oneof(
  // Members and services may read agents but not upload or delete them, even valid ones.
  fc.tuple(fc.constantFrom<Who>('alice', 'bob', 'mallory', 'globexService'), fc.constantFrom('helper', 'gadget', 'newbie'), fc.boolean()).map(
    ([who, name, asYaml]): HttpCase => ({
      label: 'member uploads an agent',
      who,
      method: 'PUT',
      path: `/v1/agents/${name}`,
      body: json(asYaml ? { yaml: toYaml(tenantAgent(name)) } : { definition: tenantAgent(name) }),
      contentType: 'application/json',
      expect: { status: 403, code: 'forbidden', mentions: 'only admins upload agents' },
    }),
  ),
  fc.tuple(fc.constantFrom<Who>('alice', 'bob', 'mallory', 'globexService'), fc.constantFrom('helper', 'gadget', 'no-such-agent')).map(
    ([who, name]): HttpCase => ({ label: 'member deletes an agent', who, method: 'DELETE', path: `/v1/agents/${name}`, body: { kind: 'none' }, expect: { status: 403, code: 'forbidden' } }),
  ),
  // Webhooks are admins' only, whatever the id; the operator is no tenant's admin.
  fc.tuple(fc.constantFrom<Who>('operator', 'alice', 'bob', 'mallory', 'globexService'), fc.constantFrom(...WEBHOOK_ROUTES), webhookRef, deliveryRef).map(
    ([who, route, hook, delivery]): HttpCase => ({
      label: `non-admin ${route.method} ${route.path}`,
      who,
      method: route.method,
      path: fillRoute(route.path, { hook: resolveIdLater(hook), delivery: resolveIdLater(delivery), name: '', tenant: '' }, 0),
      body: route.body === 'createWebhook' ? json({ url: 'https://hooks.invalid/x', events: ['run.failed'] }) : route.body === 'updateWebhook' ? json({ enabled: false }) : { kind: 'none' },
      contentType: 'application/json',
      expect: { status: 403, code: 'forbidden', mentions: who === 'operator' ? 'operator tokens reach only' : 'only admins manage webhooks' },
    }),
  ),
  // The operator's token opens no tenant route.
  fc.constantFrom('/v1/runs', '/v1/agents', '/v1/agents/helper', '/v1/interactions', '/v1/approvals', `/v1/runs/{{run1}}`, '/v1/schedules').map(
    (path): HttpCase => ({ label: 'operator on a tenant route', who: 'operator', method: 'GET', path, body: { kind: 'none' }, expect: { status: 403, code: 'forbidden' } }),
  ),
  // Tenant tokens never reach the operator's routes; forged operator tokens are not operators.
  fc.tuple(fc.constantFrom<Who>('alice', 'acmeAdmin', 'globexAdmin', 'globexService', 'forgedOperator', 'wrongSecretOperator', 'anonymous'), fc.constantFrom(...OPERATOR_ROUTES), fc.constantFrom('acme', 'globex'), digestRef).map(
    ([who, route, tenant, digest]): HttpCase => ({
      label: `${who} on ${route.method} ${route.path}`,
      who,
      method: route.method,
      path: fillRoute(route.path, { hook: '', delivery: '', name: tenant === 'acme' ? 'helper' : 'gadget', tenant }, 0),
      body: route.body ? json({ digest: resolveIdLater(digest) }) : { kind: 'none' },
      contentType: 'application/json',
      expect: ['forgedOperator', 'wrongSecretOperator', 'anonymous'].includes(who) ? { status: 401, code: 'unauthenticated' } : { status: 403, code: 'forbidden', mentions: 'only operator tokens' },
    }),
  ),
  // An admin aiming at the other tenant's endpoints, deliveries and agents: 404, as for ids that do not exist.
  fc.tuple(fc.constantFrom<'acmeAdmin' | 'globexAdmin'>('acmeAdmin', 'globexAdmin'), fc.constantFrom(...WEBHOOK_ROUTES.filter((r) => r.path.includes(':')))).map(([who, route]): HttpCase => {
    const other = OTHER_TENANT[who];
    const isDelivery = route.path.includes(':delivery');
    const id = `{{${other}${isDelivery ? 'Delivery' : 'Hook'}}}`;
    return {
      label: `foreign ${route.method} ${route.path}`,
      who,
      method: route.method,
      path: fillRoute(route.path, { hook: id, delivery: id, name: '', tenant: '' }, 0),
      // A public literal address: checked without DNS, and valid, so only the id decides.
      body: route.body === 'updateWebhook' ? json({ enabled: false, url: 'https://93.184.215.14/mine', description: 'taken over' }) : { kind: 'none' },
      contentType: 'application/json',
      expect: { status: 404, code: 'not_found', mentions: `${isDelivery ? 'webhook delivery' : 'webhook'} ${id} not found` },
    };
  }),
  fc.tuple(fc.constantFrom<'acmeAdmin' | 'globexAdmin'>('acmeAdmin', 'globexAdmin'), fc.constantFrom('GET', 'DELETE')).map(([who, method]): HttpCase => {
    const name = who === 'acmeAdmin' ? 'gadget' : 'helper';
    return { label: `foreign agent ${method}`, who, method, path: `/v1/agents/${name}`, body: { kind: 'none' }, expect: { status: 404, code: 'not_found', mentions: `agent ${name} not found` } };
  }),
  // Alias bombs and cycles are refused as YAML, naming the field.
  fc
    .tuple(fc.constantFrom<Who>('acmeAdmin', 'globexAdmin'), fc.oneof(fc.constantFrom(...CYCLIC_YAML), fc.constantFrom([9, 9], [12, 12], [30, 4], [4, 30]).map(([levels, width]) => aliasBomb(levels, width))))
    .map(([who, yaml]): HttpCase => ({
      label: 'YAML alias bomb',
      who,
      method: 'PUT',
      path: '/v1/agents/newbie',
      body: json({ yaml }),
      contentType: 'application/json',
      expect: { status: 400, code: 'validation_failed', field: 'yaml' },
    })),
  // Webhooks to this host, private networks and cloud metadata are refused, naming `url`.
  fc.tuple(fc.constantFrom<Who>('acmeAdmin', 'globexAdmin'), fc.constantFrom(...PRIVATE_URLS), fc.boolean(), webhookRef).map(
    ([who, url, create, hook]): HttpCase => ({
      label: `private webhook URL (${create ? 'create' : 'update'})`,
      who,
      method: create ? 'POST' : 'PATCH',
      path: create ? '/v1/webhooks' : `/v1/webhooks/${resolveIdLater(hook)}`,
      body: json(create ? { url, events: ['run.finished'] } : { url }),
      contentType: 'application/json',
      expect: { status: 400, code: 'validation_failed', field: 'url' },
    }),
  ),
  // The operator enables only the version it reviewed.
  fc.tuple(fc.constantFrom('acme', 'globex'), fc.constantFrom(...[0, 1, 2].map((i) => `${'0123456789abcdef'[i].repeat(64)}`))).map(
    ([tenant, digest]): HttpCase => ({
      label: 'operator enables a stale digest',
      who: 'operator',
      method: 'PUT',
      path: `/v1/operator/tenants/${tenant}/agents/${tenant === 'acme' ? 'helper' : 'gadget'}/powers`,
      body: json({ digest }),
      contentType: 'application/json',
      expect: { status: 409, code: 'conflict', field: 'digest' },
    }),
  ),
  fc.tuple(fc.constantFrom('acme', 'globex', 'initech'), fc.constantFrom('GET', 'PUT', 'DELETE'), digestRef).map(
    ([tenant, method, digest]): HttpCase => ({
      label: `operator ${method} powers of a missing agent`,
      who: 'operator',
      method,
      path: `/v1/operator/tenants/${tenant}/agents/no-such-agent/powers`,
      body: method === 'PUT' ? json({ digest: resolveIdLater(digest) }) : { kind: 'none' },
      contentType: 'application/json',
      expect: { status: 404, code: 'not_found', mentions: 'agent no-such-agent not found' },
    }),
  ),
);

/** Random paths under /v1 with random methods. */
const randomPathCase: fc.Arbitrary<HttpCase> = fc
  .tuple(
    fc.array(
      fc.oneof(
        fc.constantFrom('runs', 'interactions', 'approvals', 'agents', 'claim', 'answer', 'stop', 'v1', '..', '.', '%', '%2e%2e', '%2F', ''),
        fc.constantFrom('webhooks', 'deliveries', 'replay', 'rotate-secret', 'operator', 'tenants', 'acme', 'globex', 'powers', 'helper', 'gadget'), fc.string({ maxLength: 30 }), idArb.map(resolveIdLater)), {
      minLength: 0,
      maxLength: 6,
    }),
    fc.integer({ min: 0, max: 3 }),
    fc.constantFrom(...METHODS),
    whoArb,
    bodyArb(undefined),
  )
  .map(([segments, mode, method, who, body]): HttpCase => ({
    label: 'random path',
    who,
    method,
    path: `/v1/${segments.map((s) => encodeSegment(s, mode)).join('/')}`,
    body,
    contentType: 'application/json',
  }));

/** Another tenant, or a member who does not own them, uses the victim's ids with well-formed requests: 404 (403 for a member's claim). */
const foreignIdCase: fc.Arbitrary<HttpCase> = fc
  .tuple(foreignWho, fc.constantFrom(...ROUTES.filter((r) => r.id)), runRef, interactionRef, fc.constantFrom<unknown>({ text: 'Lisbon' }, { decision: 'allow_once' }, { decision: 'deny', reason: 'no' }, { choice: 0 }, { confirmed: true }))
  .map(([who, route, run, interaction, answer]): HttpCase => {
    const ref = route.id === 'run' ? run : interaction;
    const isClaim = route.path('x').endsWith('/claim');
    const forbidden = isClaim && who !== 'globexAdmin';
    const what = route.id === 'run' ? 'run' : 'interaction';
    return {
      label: `foreign id ${route.method} ${route.path(':id')}`,
      who,
      method: route.method,
      path: route.path(resolveIdLater(ref)),
      body: route.body === 'message' ? { kind: 'json', value: { text: 'let me in' } } : route.body === 'answer' ? { kind: 'json', value: answer } : { kind: 'none' },
      contentType: 'application/json',
      expect: forbidden ? { status: 403, code: 'forbidden' } : { status: 404, code: 'not_found', mentions: `${what} ${resolveIdLater(ref)} not found` },
    };
  });

/** Valid answers to the interaction alice answered before the fuzz: 409 for her, 404 for anyone else. */
const replayCase: fc.Arbitrary<HttpCase> = fc
  .tuple(fc.constantFrom<Who>('alice', 'alice', 'alice', 'bob', 'mallory', 'globexAdmin'), fc.oneof(fc.string({ maxLength: 200 }).map((text) => ({ text })), fc.constantFrom<unknown>({ text: 'the first and only answer' }, {})))
  .map(([who, value]): HttpCase => ({
    label: 'replayed answer',
    who,
    method: 'POST',
    path: '/v1/interactions/{{q3}}/answer',
    body: { kind: 'json', value },
    contentType: 'application/json',
    replay: true,
    // The state is checked before the answer is: any well-formed answer of alice's is a 409.
    expect: who === 'alice' ? { status: 409, code: 'conflict', mentions: 'already answered by alice' } : { status: 404, code: 'not_found' },
  }));

/** Alice answers her own open interactions and messages her live runs with bodies the gateway must refuse. */
const ownerCase: fc.Arbitrary<HttpCase> = fc
  .tuple(fc.constantFrom<keyof World>('q1', 'ap', 'q1', 'ap', 'run1', 'run2', 'run3'), objectOf(SCHEMA_FIELDS.answer, (name) => FIELD[name]))
  .map(([ref, value]): HttpCase => {
    const isRun = ref.startsWith('run');
    return {
      label: `owner ${isRun ? 'message' : 'answer'}`,
      who: 'alice',
      method: 'POST',
      path: isRun ? `/v1/runs/{{${ref}}}/messages` : `/v1/interactions/{{${ref}}}/answer`,
      body: { kind: 'json', value: isRun ? withOwn({}, 'text', (value as { text?: unknown }).text ?? value) : value },
      contentType: 'application/json',
    };
  });

const httpCase: fc.Arbitrary<HttpCase> = fc.oneof(
  { weight: 4, arbitrary: ownerCase },
  { weight: 14, arbitrary: routeCase },
  { weight: 3, arbitrary: randomPathCase },
  { weight: 3, arbitrary: foreignIdCase },
  { weight: 2, arbitrary: replayCase },
  { weight: 9, arbitrary: newRouteCase },
  { weight: 3, arbitrary: newExactCase },
);

// ---------------------------------------------------------------------------------------------
// sending HTTP

interface Prepared {
  method: string;
  path: string;
  headers: Record<string, string>;
  payload?: Buffer;
  /** The request's text, to tell an id it named from one a reply leaked. */
  echo: string;
  /** What the body parser must answer before any route or auth runs, when the body decides it. */
  expect?: HttpCase['expect'];
}

function bodyText(body: BodySpec): string | Buffer | undefined {
  switch (body.kind) {
    case 'none':
      return undefined;
    case 'json': {
      const text = JSON.stringify(materialize(body.value));
      return text === undefined ? undefined : fillIds(text);
    }
    case 'text':
      return body.text;
    case 'bytes':
      return Buffer.from(body.bytes);
    case 'huge': {
      const filler = 'z'.repeat(body.size);
      return body.wrap === 'raw' ? `["${filler}"]` : JSON.stringify({ [body.wrap]: filler });
    }
    case 'deep': {
      const open = body.shape === 'array' ? '['.repeat(body.depth) : '{"a":'.repeat(body.depth);
      const close = body.shape === 'array' ? ']'.repeat(body.depth) : '}'.repeat(body.depth);
      const deep = body.shape === 'array' ? `${open}${close}` : `${open}0${close}`;
      return body.under ? `{"${body.under}":${deep}}` : deep;
    }
  }
}

/** What the server would parse from these bytes, if anything (body-parser strips a BOM, decodes per charset). */
function parsedAs(payload: string | Buffer | undefined, contentType: string | undefined): unknown {
  if (payload === undefined) {
    return undefined;
  }
  const text = typeof payload === 'string' ? payload : payload.toString(charsetOf(contentType));
  try {
    return JSON.parse(text.replace(/^\ufeff/, ''));
  } catch {
    return undefined;
  }
}

function charsetOf(contentType: string | undefined): BufferEncoding {
  return contentType?.includes('utf-16le') ? 'utf16le' : 'utf8';
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * True when the gateway would accept `body` as an answer to an open interaction with this prompt
 * (the same checks it runs). Any other error than an invalid answer counts as refused: sent, it
 * would show up as a 500.
 */
function acceptedAnswer(prompt: Prompt, body: unknown): boolean {
  const parsed = AnswerBodySchema.safeParse(body);
  if (!parsed.success) {
    return false;
  }
  try {
    validateAnswer(prompt, parsed.data, (approval, b, issues) => answerApproval(approval, b, issues, { allowedHosts: [] }));
    return true;
  } catch (error) {
    if (!(error instanceof InvalidAnswerError)) {
      unexpectedOracleErrors.push(error);
    }
    return false;
  }
}

/** Whether alice sending `value` to something named in `target` (a path or an id) could change state. */
function wouldChangeState(target: string, value: unknown): boolean {
  const lower = target.toLowerCase();
  if ([world.run1, world.run2].some((id) => lower.includes(id)) && MessageBodySchema.safeParse(value).success) {
    return true;
  }
  return [...openPrompts].some(([id, prompt]) => lower.includes(id) && acceptedAnswer(prompt, value));
}

function decodedPath(path: string): string {
  const pathname = path.split(/[?#]/)[0];
  try {
    return decodeURIComponent(pathname);
  } catch {
    return pathname; // undecodable: the router refuses it
  }
}

/**
 * Keeps the fuzz from changing state on purpose: nobody starts a run; alice never stops her live
 * runs, and sends them no message and no answer the gateway would accept (an oracle runs the
 * gateway's own answer checks). Messages to her finished run and answers to the answered
 * interaction are sent as they are: those must be refused (409) without a write.
 */
function defuse(c: HttpCase): { path: string; payload: string | Buffer | undefined } {
  let path = fillIds(c.path);
  let payload = bodyText(c.body);
  if (READ_METHODS.has(c.method.toUpperCase())) {
    return { path, payload };
  }
  if (c.who === 'alice') {
    const decoded = decodedPath(path);
    for (const live of [world.run1, world.run2]) {
      if (decoded.toLowerCase().includes(live) && !/\/messages\/*$/i.test(decoded)) {
        path = path.split(live).join(world.run3);
      }
    }
  }
  const kept = keepOwnIds(c.who, c.method, path);
  defused += kept === path ? 0 : 1;
  path = kept;
  const value = parsedAs(payload, c.contentType);
  if (
    isPlainObject(value) &&
    (StartRunBodySchema.safeParse(value).success || (c.who === 'alice' && wouldChangeState(decodedPath(path), value)) || adminOrOperatorWouldChange(c.who, c.method, decodedPath(path), value))
  ) {
    // An unknown key makes every strict schema refuse it. Spliced into the text: the value may be
    // nested too deeply for JSON.stringify.
    const text = typeof payload === 'string' ? payload : payload!.toString(charsetOf(c.contentType));
    const at = text.indexOf('{');
    defused++;
    payload = `${text.slice(0, at + 1)}"defused":true,${text.slice(at + 1)}`;
  }
  return { path, payload };
}

const OWN = {
  acmeAdmin: { tenant: 'acme', agent: 'helper', hook: 'acmeHook', delivery: 'acmeDelivery' },
  globexAdmin: { tenant: 'globex', agent: 'gadget', hook: 'globexHook', delivery: 'globexDelivery' },
} as const;
const CURRENT_AGENTS: Record<string, { name: string; digest: keyof World }> = { acme: { name: 'helper', digest: 'helperDigest' }, globex: { name: 'gadget', digest: 'gadgetDigest' } };

/** The route a decoded path reaches (Express matches literal segments case-insensitively and ignores a trailing slash), with its params. */
function routeOf(decoded: string): { route: string; params: string[] } | undefined {
  const patterns: Array<[string, RegExp]> = [
    ['agent', /^\/v1\/agents\/([^/]+)\/*$/i],
    ['webhooks', /^\/v1\/webhooks\/*$/i],
    ['delivery', /^\/v1\/webhooks\/deliveries\/([^/]+)(?:\/replay)?\/*$/i],
    ['webhook', /^\/v1\/webhooks\/([^/]+)(?:\/rotate-secret|\/deliveries)?\/*$/i],
    ['powers', /^\/v1\/operator\/tenants\/([^/]+)\/agents\/([^/]+)\/powers\/*$/i],
  ];
  for (const [route, pattern] of patterns) {
    const match = pattern.exec(decoded);
    if (match) {
      return { route, params: match.slice(1) };
    }
  }
  return undefined;
}

/**
 * An admin deletes, rotates and replays only the other tenant's endpoints, deliveries and agents
 * (404); the operator revokes only agents that do not exist. Their own would change state.
 */
function keepOwnIds(who: Who, method: string, path: string): string {
  const upper = method.toUpperCase();
  if (READ_METHODS.has(upper) || upper === 'PATCH' || upper === 'PUT') {
    return path;
  }
  if (who === 'acmeAdmin' || who === 'globexAdmin') {
    const own = OWN[who];
    const other = OWN[who === 'acmeAdmin' ? 'globexAdmin' : 'acmeAdmin'];
    let out = path.split(world[own.hook]).join(world[other.hook]).split(world[own.delivery]).join(world[other.delivery]);
    const target = routeOf(decodedPath(out));
    if (target?.route === 'agent' && target.params[0] === own.agent) {
      out = `/v1/agents/no-such-agent${out.slice(out.split(/[?#]/)[0].length)}`;
    }
    return out;
  }
  if (who === 'operator') {
    const target = routeOf(decodedPath(path));
    if (target?.route === 'powers' && CURRENT_AGENTS[target.params[0]]?.name === target.params[1]) {
      return `/v1/operator/tenants/${target.params[0]}/agents/no-such-agent/powers${path.slice(path.split(/[?#]/)[0].length)}`;
    }
  }
  return path;
}

/** A webhook URL the gateway refuses without resolving anything: a private literal address or a local name. */
function refusedWithoutDns(url: string): boolean {
  const host = hostOf(new URL(url));
  if (isIP(host) !== 0) {
    return isPrivateAddress(host);
  }
  const name = host.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

/**
 * Whether an admin's or the operator's body would be accepted, by the gateway's own checks: an
 * agent upload, a new webhook, a change to an own webhook (or one whose URL would be resolved: that
 * waits on DNS), or enabling an agent's current version.
 */
function adminOrOperatorWouldChange(who: Who, method: string, decoded: string, value: Record<string, unknown>): boolean {
  const target = routeOf(decoded);
  const upper = method.toUpperCase();
  if (!target) {
    return false;
  }
  if (who === 'operator') {
    const parsed = EnablePowersBodySchema.safeParse(value);
    const current = CURRENT_AGENTS[target.params[0]];
    return upper === 'PUT' && target.route === 'powers' && parsed.success && current?.name === target.params[1] && parsed.data.digest === world[current.digest];
  }
  if (who !== 'acmeAdmin' && who !== 'globexAdmin') {
    return false;
  }
  if (upper === 'PUT' && target.route === 'agent') {
    const parsed = UploadAgentBodySchema.safeParse(value);
    if (!parsed.success) {
      return false;
    }
    try {
      parseUploadedAgent(target.params[0], parsed.data, stack.gateway!.get(TenantAgents).catalog);
      return true;
    } catch {
      return false;
    }
  }
  if (upper === 'POST' && target.route === 'webhooks') {
    const parsed = CreateWebhookBodySchema.safeParse(value);
    return parsed.success && !refusedWithoutDns(parsed.data.url);
  }
  if (upper === 'PATCH' && target.route === 'webhook') {
    const parsed = UpdateWebhookBodySchema.safeParse(value);
    if (!parsed.success || (parsed.data.url !== undefined && refusedWithoutDns(parsed.data.url))) {
      return false;
    }
    return target.params[0] === world[OWN[who].hook] || (parsed.data.url !== undefined && isIP(hostOf(new URL(parsed.data.url))) === 0);
  }
  return false;
}

function prepare(c: HttpCase): Prepared {
  const { path, payload } = defuse(c);
  const headers: Record<string, string> = {};
  const auth = authorization(c.who);
  if (auth) {
    headers.authorization = auth;
  }
  const method = c.method;
  const canHaveBody = !['GET', 'HEAD', 'FOO', 'BAR'].includes(method.toUpperCase());
  let bytes: Buffer | undefined;
  if (payload !== undefined && canHaveBody) {
    bytes = typeof payload === 'string' ? Buffer.from(payload, charsetOf(c.contentType)) : payload;
    if (c.contentType) {
      headers['content-type'] = c.contentType;
    }
    switch (c.encoding) {
      case undefined:
        break;
      case 'gzip':
        bytes = gzipSync(bytes);
        headers['content-encoding'] = 'gzip';
        break;
      case 'deflate':
        bytes = deflateSync(bytes);
        headers['content-encoding'] = 'deflate';
        break;
      case 'br':
        bytes = brotliCompressSync(bytes);
        headers['content-encoding'] = 'br';
        break;
      case 'identity':
        headers['content-encoding'] = 'identity';
        break;
      case 'garbage-gzip':
        headers['content-encoding'] = 'gzip';
        break;
      case 'zzz':
        headers['content-encoding'] = 'zzz';
        break;
    }
  }
  const echo = `${path} ${typeof payload === 'string' ? payload.slice(0, 200_000) : (payload?.toString('utf8') ?? '')}`;
  const expect = bodyExpectation(c, bytes, typeof payload === 'string' ? Buffer.byteLength(payload) : (payload?.length ?? 0));
  return { method, path, headers, ...(bytes ? { payload: bytes } : {}), echo, ...(expect ? { expect } : {}) };
}

/** A plain JSON body over the limit is a 413, one nested deeper than 32 a 400, whatever the route, method or token. */
function bodyExpectation(c: HttpCase, sentBytes: Buffer | undefined, bodyBytes: number): HttpCase['expect'] {
  const plainJson = c.contentType === 'application/json' || c.contentType === 'application/json; charset=utf-8';
  const decodable = c.encoding === undefined || c.encoding === 'gzip' || c.encoding === 'deflate' || c.encoding === 'br' || c.encoding === 'identity';
  if (!sentBytes || !plainJson || !decodable || !/^[A-Z]+$/.test(c.method)) {
    return undefined;
  }
  if (bodyBytes > LIMITS.bodyBytes) {
    return { status: 413, code: 'payload_too_large' };
  }
  if (c.body.kind === 'deep' && c.body.depth + (c.body.under ? 1 : 0) > 32) {
    return { status: 400, code: 'bad_request', mentions: 'nested too deeply' };
  }
  return undefined;
}

interface Reply {
  status: number;
  text: string;
}

async function send(p: Prepared): Promise<Reply> {
  const response = await fetch(`${stack.url}${p.path}`, {
    method: p.method,
    headers: p.headers,
    ...(p.payload ? { body: p.payload } : {}),
    signal: AbortSignal.timeout(20_000),
  });
  return { status: response.status, text: await response.text() };
}

function short(text: string, max = 300): string {
  return text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text;
}

/** Exactly `{ error: { code, message, details? } }` with a code that fits the status; undefined when fine. */
function errorShapeProblem(body: unknown, status: number | null): string | undefined {
  const parsed = ErrorBodySchema.safeParse(body);
  if (!parsed.success) {
    return 'not an error body';
  }
  if (Object.keys(body as object).length !== 1 || Object.keys((body as { error: object }).error).some((k) => !['code', 'message', 'details'].includes(k))) {
    return 'extra keys in the error body';
  }
  const { code, message } = parsed.data.error;
  if (code === 'internal') {
    return 'internal error';
  }
  if (message.length === 0) {
    return 'empty message';
  }
  if (status !== null && !STATUS_OF[code].includes(status)) {
    return `code ${code} with status ${status}`;
  }
  return undefined;
}

function leaks(who: Who | 'socket-other', text: string, echo: string): string | undefined {
  // No create or rotate ever succeeds here, so no reply carries a signing secret.
  if (text.includes('whsec_') && !echo.includes('whsec_')) {
    return 'a webhook secret';
  }
  return hiddenFrom(who).find((id) => text.includes(id) && !echo.includes(id));
}

function checkHttp(c: HttpCase, p: Prepared, reply: Reply): string | undefined {
  const method = p.method.toUpperCase();
  if (reply.status >= 200 && reply.status < 300) {
    if (!READ_METHODS.has(method) || p.method !== method) {
      return `a ${reply.status} to a ${p.method}`;
    }
    if (method === 'OPTIONS') {
      return reply.status === 204 ? undefined : `OPTIONS gave ${reply.status}`;
    }
  } else if (!ALLOWED_STATUS.has(reply.status)) {
    return `status ${reply.status}`;
  }
  const leaked = leaks(c.who, reply.text, p.echo);
  if (leaked) {
    return `leaked ${leaked}`;
  }
  if (method === 'HEAD') {
    return undefined;
  }
  let body: unknown;
  try {
    body = JSON.parse(reply.text);
  } catch {
    return 'reply is not JSON';
  }
  if (reply.status >= 400) {
    const problem = errorShapeProblem(body, reply.status);
    if (problem) {
      return problem;
    }
  } else if (!isPlainObject(body)) {
    return '2xx body is not an object';
  }
  const expected = p.expect ?? c.expect;
  if (expected) {
    const error = (body as { error?: { code?: string; message?: string } }).error;
    if (reply.status !== expected.status || (expected.code && error?.code !== expected.code)) {
      return `expected ${expected.status} ${expected.code ?? ''}`;
    }
    if (expected.mentions && !error?.message?.includes(fillIds(expected.mentions))) {
      return `expected the message to mention "${fillIds(expected.mentions)}"`;
    }
    const issues = (body as { error?: { details?: { issues?: Array<{ field?: string }> } } }).error?.details?.issues;
    if (expected.field && !issues?.some((issue) => issue.field === expected.field)) {
      return `expected an issue naming "${expected.field}"`;
    }
  }
  return undefined;
}

async function runHttp(c: HttpCase): Promise<void> {
  const p = prepare(c);
  sent.http++;
  if (/^\/v1\/(agents\/|webhooks|operator)/i.test(p.path)) {
    sentToNewRoutes++;
  }
  let reply: Reply;
  try {
    reply = await send(p);
  } catch (error) {
    throw new Error(`${c.label}: ${p.method} ${short(p.path, 200)} as ${c.who} failed: ${(error as Error).message} (${String((error as { cause?: unknown }).cause)})`, { cause: error });
  }
  tally(outcomes.http, `${reply.status} ${errorCodeOf(reply.text)}`);
  const problem = checkHttp(c, p, reply);
  if (problem) {
    throw new Error(`${c.label}: ${p.method} ${short(p.path, 200)} as ${c.who} with ${short(p.echo, 200)} -> ${reply.status} ${short(reply.text)}: ${problem}`);
  }
}

// ---------------------------------------------------------------------------------------------
// socket.io cases

interface SocketCase {
  label: string;
  who: 'alice' | 'bob' | 'mallory' | 'globexAdmin';
  event: string;
  args: unknown[];
  replay?: boolean;
  expect?: { ok?: true; code?: ErrorCode };
}

const SOCKET_SCHEMA: Record<(typeof SOCKET_EVENTS)[number], keyof typeof SCHEMA_FIELDS> = {
  subscribe: 'subscribe',
  answer: 'answerMessage',
  message: 'runMessage',
  stop: 'stop',
  claim: 'claim',
  approvals: 'approvals',
};

const socketWho = fc.constantFrom<SocketCase['who']>('alice', 'alice', 'bob', 'mallory', 'mallory', 'globexAdmin');
const eventArb = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom<string>(...SOCKET_EVENTS) },
  {
    weight: 2,
    arbitrary: fc.constantFrom('error', 'event', 'ping', 'Subscribe', 'answer ', '__proto__', 'constructor', 'toString', 'hasOwnProperty', 'connection', 'disconnect_', '', 'x'.repeat(500), ...LONE_SURROGATES),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 30 }).filter((e) => !RESERVED_EVENTS.has(e)) },
);

/** Each payload stays under half the 512 KiB message limit, so two in one message do too (over it, the connection closes: tested apart). */
function payloadArb(event: string): fc.Arbitrary<unknown> {
  // Own keys only: an event named "__proto__" or "constructor" must not find Object's.
  const schema = Object.hasOwn(SOCKET_SCHEMA, event) ? SOCKET_SCHEMA[event as keyof typeof SOCKET_SCHEMA] : 'answerMessage';
  const object = objectOf(SCHEMA_FIELDS[schema], fieldWithAnswer).map((value) => resolveRefs(value));
  return fc.oneof(
    { weight: 30, arbitrary: object },
    { weight: 6, arbitrary: hostile.map(resolveRefs) },
    { weight: 2, arbitrary: deepArb },
    { weight: 1, arbitrary: hugeString(10_000, 250_000) },
    { weight: 2, arbitrary: fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes)) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...SCHEMA_FIELDS[schema]), hugeString(10_000, 250_000)).map(([key, value]) => withOwn({}, key, value)) },
    { weight: 3, arbitrary: pollutionObject },
  );
}

/** Id stand-ins inside socket payloads become placeholders, filled at send time. */
function resolveRefs(value: unknown): unknown {
  if (isPlainObject(value) && Object.keys(value).length === 1 && ('ref' in value || 'literal' in value)) {
    return resolveIdLater(value as IdRef);
  }
  if (isPlainObject(value)) {
    let out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      out = withOwn(out, key, isPlainObject(item) && Object.keys(item).length === 1 && ('ref' in item || 'literal' in item) ? resolveIdLater(item as IdRef) : item);
    }
    return out;
  }
  return value;
}

const fuzzSocketCase: fc.Arbitrary<SocketCase> = fc
  .tuple(socketWho, eventArb, fc.integer({ min: 0, max: 9 }))
  .chain(([who, event, arity]) =>
    (arity === 0 ? fc.constant<unknown[]>([]) : arity === 1 ? fc.tuple(payloadArb(event), payloadArb(event)) : fc.tuple(payloadArb(event))).map(
      (args): SocketCase => ({ label: `socket ${event}`, who, event, args }),
    ),
  );

const foreignSocketCase: fc.Arbitrary<SocketCase> = fc
  .tuple(fc.constantFrom<SocketCase['who']>('bob', 'mallory', 'globexAdmin'), fc.constantFrom('subscribe', 'answer', 'message', 'stop', 'claim'), runRef, interactionRef)
  .map(([who, event, run, interaction]): SocketCase => {
    const runId = resolveIdLater(run);
    const interactionId = resolveIdLater(interaction);
    const args = {
      subscribe: { runId },
      answer: { interactionId, answer: { text: 'mine now' } },
      message: { runId, text: 'let me in' },
      stop: { runId },
      claim: { interactionId },
    }[event];
    const forbidden = event === 'claim' && who !== 'globexAdmin';
    return { label: `foreign socket ${event}`, who, event, args: [args], expect: { code: forbidden ? 'forbidden' : 'not_found' } };
  });

const replaySocketCase: fc.Arbitrary<SocketCase> = fc
  .tuple(fc.constantFrom<SocketCase['who']>('alice', 'alice', 'mallory', 'bob'), fc.string({ maxLength: 100 }))
  .map(([who, text]): SocketCase => ({
    label: 'replayed socket answer',
    who,
    event: 'answer',
    args: [{ interactionId: '{{q3}}', answer: { text } }],
    replay: true,
    expect: { code: who === 'alice' ? 'conflict' : 'not_found' },
  }));

/** Alice answers her open interactions and messages her runs over the socket; `defuseSocket` keeps what would be accepted out. */
const ownerSocketCase: fc.Arbitrary<SocketCase> = fc
  .tuple(fc.constantFrom<keyof World>('q1', 'ap', 'run1', 'run3'), fc.oneof({ weight: 4, arbitrary: answerBody }, { weight: 1, arbitrary: hostile }), weirdString)
  .map(([ref, answer, text]): SocketCase => {
    const isRun = ref.startsWith('run');
    return {
      label: `owner socket ${isRun ? 'message' : 'answer'}`,
      who: 'alice',
      event: isRun ? 'message' : 'answer',
      args: [isRun ? { runId: `{{${ref}}}`, text } : { interactionId: `{{${ref}}}`, answer: resolveRefs(answer) }],
    };
  });

const socketCase: fc.Arbitrary<SocketCase> = fc.oneof(
  { weight: 14, arbitrary: fuzzSocketCase },
  { weight: 3, arbitrary: ownerSocketCase },
  { weight: 2, arbitrary: foreignSocketCase },
  { weight: 1, arbitrary: replaySocketCase },
);

function fillDeep(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') {
    return fillIds(value);
  }
  if (depth > 3 || value === null || typeof value !== 'object' || Buffer.isBuffer(value)) {
    return value;
  }
  if (Array.isArray(value)) {
    return value.map((item) => fillDeep(item, depth + 1));
  }
  let out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    out = withOwn(out, key, fillDeep(item, depth + 1));
  }
  return out;
}

/** The socket counterpart of `defuse`: alice sends no answer or message that would be accepted, and stops no live run. */
function defuseSocket(c: SocketCase, args: unknown[]): unknown[] {
  if (c.who !== 'alice' || args.length !== 1) {
    return args;
  }
  const [payload] = args;
  if (!isPlainObject(payload)) {
    return args;
  }
  if (c.event === 'answer') {
    const message = AnswerMessageSchema.safeParse(payload);
    const prompt = message.success ? openPrompts.get(message.data.interactionId) : undefined;
    if (message.success && prompt && acceptedAnswer(prompt, message.data.answer)) {
      return [withOwn(payload, 'defused', true)];
    }
  }
  if (c.event === 'message') {
    const message = RunMessageSchema.safeParse(payload);
    if (message.success && [world.run1, world.run2].includes(message.data.runId)) {
      return [withOwn(payload, 'defused', true)];
    }
  }
  if (c.event === 'stop') {
    const stop = StopMessageSchema.safeParse(payload);
    if (stop.success && [world.run1, world.run2].includes(stop.data.runId)) {
      return [withOwn(payload, 'runId', world.run3)];
    }
  }
  return args;
}

interface Clients {
  sockets: Record<SocketCase['who'], Socket[]>;
  events: Map<Socket, ParleyEvent[]>;
  disconnects: Map<Socket, string>;
}

function openSocket(token: string): Promise<Socket> {
  const socket = io(`${stack.url}/v1`, { auth: { token }, transports: ['websocket'], reconnection: false, forceNew: true });
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve(socket));
    socket.once('connect_error', reject);
  });
}

async function openClients(): Promise<Clients> {
  const events = new Map<Socket, ParleyEvent[]>();
  const disconnects = new Map<Socket, string>();
  const open = async (claims: { tenant: string; sub: string; role: 'member' | 'admin' }, n: number) => {
    const sockets = await Promise.all(Array.from({ length: n }, () => openSocket(stack.token(claims))));
    for (const socket of sockets) {
      const seen: ParleyEvent[] = [];
      events.set(socket, seen);
      socket.on('event', (event: ParleyEvent) => seen.push(event));
      socket.on('disconnect', (reason) => disconnects.set(socket, reason));
    }
    return sockets;
  };
  return {
    sockets: { alice: await open(ALICE, 2), bob: await open(BOB, 1), mallory: await open(MALLORY, 2), globexAdmin: await open(GLOBEX_ADMIN, 1) },
    events,
    disconnects,
  };
}

async function runSocket(clients: Clients, c: SocketCase, pick: number): Promise<void> {
  const pool = clients.sockets[c.who];
  const socket = pool[pick % pool.length];
  const args = defuseSocket(c, fillDeep(c.args.map((arg) => materialize(arg))) as unknown[]);
  const echo = JSON.stringify(args.map((a) => (Buffer.isBuffer(a) ? '<buffer>' : a))) ?? '';
  sent.socket++;
  let ack: unknown;
  try {
    ack = await socket.timeout(20_000).emitWithAck(c.event, ...args);
  } catch (error) {
    throw new Error(`${c.label} as ${c.who}: ${short(echo)}: no ack (${(error as Error).message}); disconnected: ${clients.disconnects.get(socket) ?? 'no'}`, { cause: error });
  }
  const fail = (problem: string) => new Error(`${c.label} as ${c.who}: ${short(echo)} -> ${short(JSON.stringify(ack) ?? String(ack))}: ${problem}`);
  if (!isPlainObject(ack)) {
    throw fail('ack is not an object');
  }
  if (ack.ok === true) {
    if (!READ_EVENTS.has(c.event)) {
      throw fail(`ok ack to a ${c.event}`);
    }
  } else {
    const problem = errorShapeProblem(ack, null);
    if (problem) {
      throw fail(problem);
    }
  }
  const leaked = leaks(c.who === 'alice' ? 'alice' : 'socket-other', JSON.stringify(ack), echo);
  if (leaked) {
    throw fail(`leaked ${leaked}`);
  }
  const code = (ack as { error?: { code?: string } }).error?.code;
  tally(outcomes.socket, code ?? 'ok');
  if (c.expect?.code && code !== c.expect.code) {
    throw fail(`expected ${c.expect.code}`);
  }
  // A known event whose payload nests deeper than 32 levels never reaches its handler.
  if ((SOCKET_EVENTS as readonly string[]).includes(c.event) && args.some((arg) => depthOf(arg) > 32) && code !== 'bad_request') {
    throw fail('expected bad_request: nested too deeply');
  }
}

// ---------------------------------------------------------------------------------------------
// raw engine.io (long-polling) packets with invalid UTF-8

type Chunk = string | number[];
type BJson = { str: Chunk[] } | { lit: string } | { obj: Array<[Chunk[], BJson]> } | { arr: BJson[] };

function encodeChunks(chunks: Chunk[]): Buffer {
  return Buffer.concat([
    Buffer.from('"'),
    ...chunks.map((chunk) => (typeof chunk === 'string' ? Buffer.from(JSON.stringify(chunk).slice(1, -1).split('\u001e').join('\\u001e')) : Buffer.from(chunk))),
    Buffer.from('"'),
  ]);
}

function encodeBJson(node: BJson): Buffer {
  if ('str' in node) {
    return encodeChunks(node.str);
  }
  if ('lit' in node) {
    return Buffer.from(node.lit);
  }
  if ('arr' in node) {
    return Buffer.concat([Buffer.from('['), ...node.arr.flatMap((item, i) => (i > 0 ? [Buffer.from(','), encodeBJson(item)] : [encodeBJson(item)])), Buffer.from(']')]);
  }
  return Buffer.concat([
    Buffer.from('{'),
    ...node.obj.flatMap(([key, value], i) => [...(i > 0 ? [Buffer.from(',')] : []), encodeChunks(key), Buffer.from(':'), encodeBJson(value)]),
    Buffer.from('}'),
  ]);
}

/** Ids in raw packets are placeholders, filled when the packet is encoded. */
const chunkArb: fc.Arbitrary<Chunk> = fc.oneof(fc.constantFrom(...INVALID_UTF8), fc.string({ maxLength: 8 }), idArb.map(resolveIdLater));
const chunksArb = fc.array(chunkArb, { minLength: 1, maxLength: 4 });
const bjsonArb: fc.Arbitrary<BJson> = fc.letrec<{ node: BJson }>((tie) => ({
  node: fc.oneof(
    { maxDepth: 3 },
    chunksArb.map((str): BJson => ({ str })),
    fc.constantFrom('1', '-1', '0.5', 'true', 'null', '1e999').map((lit): BJson => ({ lit })),
    fc.array(fc.tuple(fc.oneof(chunksArb, fc.constantFrom(...POLLUTION_KEYS, 'runId', 'interactionId', 'answer', 'text', 'since').map((k): Chunk[] => [k])), tie('node')), { maxLength: 4 }).map((obj): BJson => ({ obj })),
    fc.array(tie('node'), { maxLength: 3 }).map((arr): BJson => ({ arr })),
  ),
})).node;

const rawPacketArb = fc.tuple(fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...SOCKET_EVENTS).map((e): Chunk[] => [e]) }, { weight: 1, arbitrary: chunksArb }), bjsonArb);

/** A bare engine.io v4 long-polling session on the /v1 namespace: text in, text out. */
class RawSession {
  private constructor(
    private readonly base: string,
    readonly inbox: string[],
  ) {}

  static async open(token: string): Promise<RawSession> {
    const handshake = await (await fetch(`${stack.url}/socket.io/?EIO=4&transport=polling`)).text();
    const { sid } = JSON.parse(handshake.slice(1)) as { sid: string };
    const session = new RawSession(`${stack.url}/socket.io/?EIO=4&transport=polling&sid=${sid}`, []);
    await session.post(Buffer.from(`40/v1,${JSON.stringify({ token })}`));
    await waitFor(async () => (await session.poll()).some((p) => p.startsWith('40/v1,')), { timeoutMs: 5000, message: 'the namespace connect' });
    return session;
  }

  async post(body: Buffer): Promise<void> {
    const response = await fetch(this.base, { method: 'POST', body, headers: { 'content-type': 'text/plain;charset=UTF-8' } });
    const text = await response.text();
    if (response.status !== 200 || text !== 'ok') {
      throw new Error(`engine.io POST answered ${response.status} ${short(text)}`);
    }
  }

  async poll(): Promise<string[]> {
    const response = await fetch(this.base, { signal: AbortSignal.timeout(10_000) });
    const text = await response.text();
    if (response.status !== 200) {
      throw new Error(`engine.io GET answered ${response.status} ${short(text)}`);
    }
    const packets = text.split('\u001e');
    this.inbox.push(...packets);
    return packets;
  }

  async close(): Promise<void> {
    await this.post(Buffer.from('1')).catch(() => undefined);
  }
}

function encodeRaw(id: number, event: Chunk[], payload: BJson): Buffer {
  const fill = (chunks: Chunk[]) => chunks.map((c) => (typeof c === 'string' ? fillIds(c) : c));
  const fillNode = (node: BJson): BJson =>
    'str' in node ? { str: fill(node.str) } : 'obj' in node ? { obj: node.obj.map(([k, v]) => [fill(k), fillNode(v)]) } : 'arr' in node ? { arr: node.arr.map(fillNode) } : node;
  return Buffer.concat([Buffer.from(`42/v1,${id}[`), encodeChunks(fill(event)), Buffer.from(','), encodeBJson(fillNode(payload)), Buffer.from(']')]);
}

// ---------------------------------------------------------------------------------------------
// raw TCP

function rawTcp(request: Buffer): Promise<Reply> {
  const port = Number(new URL(stack.url).port);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = tcpConnect(port, '127.0.0.1', () => socket.write(request));
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no reply within 10 s to ${short(request.toString('latin1'), 80)}`));
    }, 10_000);
    socket.on('data', (data) => chunks.push(data));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('utf8');
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] ?? 0);
      resolve({ status, text: text.slice(text.indexOf('\r\n\r\n') + 4) });
    });
  });
}

// ---------------------------------------------------------------------------------------------

/**
 * `fc.assert` with the fixed seed, no shrinking (each run is a batch against a shared stack), and a
 * report that names the failing request instead of printing a batch of half-megabyte bodies.
 */
async function check<T>(property: fc.IAsyncProperty<T>, numRuns: number): Promise<void> {
  const details = await fc.check(property, { seed: SEED, numRuns, endOnFailure: true });
  if (details.failed) {
    const cause = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
    throw new Error(`fuzz failed at run ${details.numRuns} (seed ${details.seed}, path ${details.counterexamplePath ?? '-'}): ${cause}`);
  }
}

describe('hostile input (property-based fuzz)', () => {
  it(
    'HTTP: every hostile request gets a well-formed 4xx (or a 2xx read), never a 5xx or a leak',
    async () => {
      await check(
        fc.asyncProperty(fc.array(httpCase, { minLength: HTTP_BATCH, maxLength: HTTP_BATCH }), async (batch) => {
          await Promise.all(batch.map((c) => runHttp(c)));
        }),
        HTTP_RUNS,
      );
    },
    FUZZ_TIMEOUT_MS,
  );

  it(
    'socket.io: every hostile message is acked with an error body (or ok for a read), and no socket drops',
    async () => {
      const clients = await openClients();
      try {
        await check(
          fc.asyncProperty(fc.array(fc.tuple(socketCase, fc.nat()), { minLength: SOCKET_BATCH, maxLength: SOCKET_BATCH }), async (batch) => {
            await Promise.all(batch.map(([c, pick]) => runSocket(clients, c, pick)));
          }),
          SOCKET_RUNS,
        );
        const all = Object.values(clients.sockets).flat();
        expect(all.filter((s) => !s.connected)).toHaveLength(0);
        // No other tenant and no other member saw an event of alice's runs.
        for (const who of ['bob', 'mallory', 'globexAdmin'] as const) {
          for (const socket of clients.sockets[who]) {
            expect((clients.events.get(socket) ?? []).filter((e) => e.tenant === 'acme' && (who !== 'bob' || e.owner === 'alice'))).toEqual([]);
          }
        }
      } finally {
        Object.values(clients.sockets)
          .flat()
          .forEach((s) => s.disconnect());
      }
    },
    FUZZ_TIMEOUT_MS,
  );

  it(
    'raw engine.io packets with invalid UTF-8 are acked with well-formed errors',
    async () => {
      const samples = fc.sample(fc.array(fc.tuple(rawPacketArb, fc.constantFrom('mallory', 'bob', 'globexAdmin')), { minLength: RAW_PACKETS, maxLength: RAW_PACKETS }), {
        seed: SEED,
        numRuns: RAW_SESSIONS * RAW_ROUNDS,
      });
      const claims = { mallory: MALLORY, bob: BOB, globexAdmin: GLOBEX_ADMIN } as const;
      await Promise.all(
        Array.from({ length: RAW_SESSIONS }, async (_, s) => {
          const sessions = new Map<string, RawSession>();
          for (let round = 0; round < RAW_ROUNDS; round++) {
            const batch = samples[s * RAW_ROUNDS + round];
            const who = batch[0][1];
            const session = sessions.get(who) ?? (await RawSession.open(stack.token(claims[who])));
            sessions.set(who, session);
            const ids = batch.map((_p, i) => round * 1000 + i + 1);
            const packets = batch.map(([[event, payload]], i) => encodeRaw(ids[i], event, payload));
            await session.post(Buffer.concat(packets.flatMap((p, i) => (i > 0 ? [Buffer.from([0x1e]), p] : [p]))));
            sent.raw += packets.length;
            const acks = new Map<number, unknown>();
            await waitFor(
              async () => {
                for (const packet of await session.poll()) {
                  const match = /^43\/v1,(\d+)(\[.*)$/s.exec(packet);
                  if (match) {
                    acks.set(Number(match[1]), (JSON.parse(match[2]) as unknown[])[0]);
                  }
                }
                return ids.every((id) => acks.has(id));
              },
              { timeoutMs: 15_000, message: `acks for ${ids.length} raw packets` },
            );
            ids.forEach((id, i) => {
              const ack = acks.get(id);
              const event = batch[i][0][0];
              const eventName = event.length === 1 && typeof event[0] === 'string' ? event[0] : '';
              const ok = isPlainObject(ack) && ack.ok === true && READ_EVENTS.has(eventName);
              expect({ packet: packets[i].toString('utf8').slice(0, 200), problem: ok ? undefined : errorShapeProblem(ack, null) }).toEqual({ packet: expect.any(String), problem: undefined });
              expect(leaks('socket-other', JSON.stringify(ack), packets[i].toString('utf8'))).toBeUndefined();
            });
          }
          await Promise.all([...sessions.values()].map((session) => session.close()));
        }),
      );

      // A packet that is not even JSON closes that session (and only that one: the next test still connects).
      const broken = await RawSession.open(stack.token(MALLORY));
      await broken.post(Buffer.concat([Buffer.from('42/v1,1["answer",{"text":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"')]));
      sent.raw++;
      const closed = await waitFor(
        async () =>
          (await broken.poll().then(
            (packets) => packets.some((p) => p.startsWith('1') || p.startsWith('41')),
            () => true,
          )) || undefined,
        { timeoutMs: 10_000, message: 'the broken session to be closed' },
      );
      expect(closed).toBe(true);
    },
    FUZZ_TIMEOUT_MS,
  );

  it('a socket.io message over the size limit closes only that connection; a deep one is refused before any handler', async () => {
    const [victim, bystander] = await Promise.all([openSocket(stack.token(MALLORY)), openSocket(stack.token(MALLORY))]);
    try {
      const disconnected = new Promise<string>((resolve) => victim.once('disconnect', (reason) => resolve(reason)));
      victim.emit('answer', { interactionId: world.q1, answer: { text: 'x'.repeat(LIMITS.bodyBytes + 1024) } });
      sent.socket++;
      expect(await disconnected).toEqual(expect.any(String));
      const deep = await bystander.timeout(10_000).emitWithAck('answer', { interactionId: world.q1, answer: { input: deepValue(40, 'object') } });
      sent.socket++;
      expect(deep).toEqual({ error: { code: 'bad_request', message: expect.stringContaining('nested too deeply') } });
      expect(await bystander.timeout(10_000).emitWithAck('nope', {})).toEqual({ error: { code: 'not_found', message: 'unknown event "nope"' } });
      sent.socket++;
      expect(await bystander.timeout(10_000).emitWithAck('subscribe', {})).toEqual({ ok: true, lastSeq: expect.any(Number), truncated: false });
      sent.socket++;
    } finally {
      victim.disconnect();
      bystander.disconnect();
    }
  });

  it('a YAML alias bomb is refused at once, naming yaml; an operator token opens no socket', async () => {
    const admin = stack.token(ACME_ADMIN);
    for (const yaml of [aliasBomb(9, 9), aliasBomb(30, 30), ...CYCLIC_YAML]) {
      const startedAt = Date.now();
      const reply = await stack.http('PUT', '/v1/agents/newbie', { yaml }, admin);
      sent.http++;
      expect({ yaml: short(yaml, 60), status: reply.status, code: reply.body.error?.code, fields: reply.body.error?.details?.issues?.map((i: { field: string }) => i.field) }).toEqual({
        yaml: short(yaml, 60),
        status: 400,
        code: 'validation_failed',
        fields: ['yaml'],
      });
      expect(Date.now() - startedAt).toBeLessThan(2000);
    }
    await expect(openSocket(stack.token(OPERATOR))).rejects.toThrow(/operator/);
    sent.socket++;
  });

  it("raw HTTP that Node's parser refuses gets a JSON error too", async () => {
    const token = stack.token(MALLORY);
    const fixed = [
      { request: 'GARBAGE\r\n\r\n', status: 400 },
      { request: 'GET /v1/runs HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n', status: 400 },
      { request: 'GET /v1/runs HTTP/1.1\r\nHost: x\r\nX: a\u0000b\r\n\r\n', status: 400 },
      { request: 'POST /v1/runs HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n', status: 400 },
      { request: 'POST /v1/runs HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', status: 400 },
      { request: 'GET /v1/runs HTTP/9.9\r\n\r\n', status: 400 },
      { request: `GET /v1/runs/${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`, status: 431 },
      { request: `GET /v1/runs HTTP/1.1\r\nHost: x\r\nX-Pad: ${'b'.repeat(17_000)}\r\n\r\n`, status: 431 },
      {
        request: `POST /v1/runs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
        status: 400,
      },
      { request: `GET /v1/runs HTTP/1.0\r\nAuthorization: Bearer ${token}x\r\n\r\n`, status: 401 },
    ];
    const garbage = fc.sample(fc.uint8Array({ minLength: 1, maxLength: 200 }), { seed: SEED, numRuns: 100 }).map((bytes) => ({
      request: Buffer.concat([Buffer.from([0x00]), Buffer.from(bytes), Buffer.from('\r\n\r\n')]),
      status: 400,
    }));
    const replies = await Promise.all([...fixed.map((f) => ({ ...f, request: Buffer.from(f.request, 'latin1') })), ...garbage].map(async (f) => ({ f, reply: await rawTcp(f.request) })));
    sent.tcp += replies.length;
    for (const { f, reply } of replies) {
      const request = short(f.request.toString('latin1'), 80);
      expect({ request, status: reply.status }).toEqual({ request, status: f.status });
      expect({ request, problem: errorShapeProblem(JSON.parse(reply.text), null) }).toEqual({ request, problem: undefined });
    }
  });

  it('afterwards: nothing crashed or leaked, nothing is polluted, and Redis is exactly as before', async () => {
    expect(processErrors).toEqual([]);
    expect(unexpectedOracleErrors).toEqual([]);
    expect(await stack.http('GET', '/healthz', undefined, null)).toEqual({ status: 200, body: { ok: true } });
    // Prototypes are untouched.
    expect(prototypeKeys()).toEqual(prototypesBefore);
    expect(({} as Record<string, unknown>)[MARK]).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty(MARK);

    const after = await settled();
    // A rate window ends on its own clock (a slow fuzz outlives it); a window that changed or appeared would show.
    const windowsEnded = Object.keys(before).filter((key) => RATE_WINDOW.test(key) && !(key in after));
    expect(after).toEqual(Object.fromEntries(Object.entries(before).filter(([key]) => !windowsEnded.includes(key))));

    const alice = stack.token(ALICE);
    const q1 = await stack.http('GET', `/v1/interactions/${world.q1}`, undefined, alice);
    const ap = await stack.http('GET', `/v1/interactions/${world.ap}`, undefined, alice);
    expect([q1.body.interaction.status, ap.body.interaction.status]).toEqual(['open', 'open']);
    expect(ap.body.interaction.claim).toBeUndefined();
    expect((await stack.run(world.run1, alice)).run.status).toBe('waiting');
    expect((await stack.run(world.run2, alice)).run.status).toBe('waiting');
    const log = (await stack.http('GET', `/v1/runs/${world.run3}/log`, undefined, alice)).body.entries as Array<{ type: string }>;
    expect(log.filter((entry) => entry.type === 'answer')).toHaveLength(1);
    // The endpoints, their deliveries, the tenant agents and the one enablement are as they were.
    for (const [who, hook, delivery] of [
      [ACME_ADMIN, world.acmeHook, world.acmeDelivery],
      [GLOBEX_ADMIN, world.globexHook, world.globexDelivery],
    ] as const) {
      const hooks = (await stack.http('GET', '/v1/webhooks', undefined, stack.token(who))).body.webhooks as Array<{ id: string; enabled: boolean; secretRotatedAt?: string }>;
      expect(hooks.map((h) => [h.id, h.enabled, h.secretRotatedAt])).toEqual([[hook, true, undefined]]);
      const deliveries = (await stack.http('GET', `/v1/webhooks/${hook}/deliveries`, undefined, stack.token(who))).body.deliveries as Array<{ id: string }>;
      expect(deliveries.map((d) => d.id)).toEqual([delivery]);
    }
    const operator = stack.token(OPERATOR);
    const powers = async (tenant: string, name: string) => (await stack.http('GET', `/v1/operator/tenants/${tenant}/agents/${name}/powers`, undefined, operator)).body.powers;
    expect(await powers('acme', 'helper')).toMatchObject({ digest: world.helperDigest, enabled: false, enabledVersions: [] });
    expect(await powers('globex', 'gadget')).toMatchObject({ digest: world.gadgetDigest, enabled: true });
    for (const tenant of ['acme', 'globex']) {
      const agents = (await stack.http('GET', `/v1/operator/tenants/${tenant}/agents`, undefined, operator)).body.agents as Array<{ name: string }>;
      expect(agents.map((a) => a.name)).toEqual([tenant === 'acme' ? 'helper' : 'gadget']);
    }

    const total = sent.http + sent.socket + sent.raw + sent.tcp;
    console.log(
      [
        `hostile-input fuzz: ${total} messages (HTTP ${sent.http}, socket.io ${sent.socket}, raw engine.io ${sent.raw}, raw TCP ${sent.tcp}) in ${((Date.now() - started) / 1000).toFixed(1)} s`,
        `  HTTP to /v1/agents/:name, /v1/webhooks and /v1/operator: ${sentToNewRoutes}; defused: ${defused}`,
        `  HTTP replies: ${summary(outcomes.http)}`,
        `  socket.io acks: ${summary(outcomes.socket)}`,
      ].join('\n'),
    );
    expect(total).toBeGreaterThanOrEqual(20_000);
  });
});
