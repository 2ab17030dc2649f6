import { createHash, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Actor, Answer, EventDraft, Interaction, InteractionRequest, LogEntry, ParleyEvent, Prompt, PublishedMessage } from '@parley/contracts';
import type { AcquireResult, Lease, NewRun } from './run.types';
import { ParleyStore } from './store';
import { NO_DEADLINE_SCORE } from './interaction.repository';
import { LeaseLostError } from './lease.errors';
import { InteractionResolver } from './interaction.resolver';
import { ParleyQueues } from './queues';
import { RedisWorkspace } from './workspace.repository';
import { waitFor } from '../../../test/support/wait-for';

/**
 * The atomic steps (the Lua scripts behind the repositories) against a real Redis. Every store
 * gets a key prefix of its own; the keys are deleted after each test (never FLUSHDB: the Redis is
 * shared with other test files).
 */

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const RETENTION_SECS = 3600;
const TENANT = 'acme';

const ALICE: Actor = { kind: 'user', subject: 'alice', role: 'member' };
const BOB: Actor = { kind: 'user', subject: 'bob', role: 'admin' };
const CHOICE: Prompt = {
  kind: 'multiple_choice',
  prompt: 'What kind of event is it?',
  options: ['Workshop', 'Retreat', 'Party'].map((label) => ({ label })),
  multi: false,
};
const LABELS = ['Workshop', 'Retreat', 'Party'];
const RETREAT: Answer = { kind: 'multiple_choice', choices: [1], labels: ['Retreat'] };

const clients: Redis[] = [];
/** Closed after each test, before its clients. */
const closers: Array<() => Promise<void>> = [];
const prefixes = new Set<string>();
let admin: Redis;

function makeStore(options: { leaseMs?: number; prefix?: string; eventsMaxLen?: number } = {}): ParleyStore {
  const prefix = options.prefix ?? `ts-${randomUUID()}`;
  prefixes.add(prefix);
  const redis = new Redis(REDIS_URL);
  clients.push(redis);
  return new ParleyStore(redis, { prefix, eventsMaxLen: options.eventsMaxLen ?? 1000, retentionSecs: RETENTION_SECS, leaseMs: options.leaseMs ?? 2000 });
}

async function scanKeys(pattern: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await admin.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    found.push(...keys);
  } while (cursor !== '0');
  return found.sort();
}

beforeAll(() => {
  admin = new Redis(REDIS_URL);
});

afterEach(async () => {
  for (const prefix of prefixes) {
    const keys = await scanKeys(`${prefix}:*`);
    if (keys.length > 0) {
      await admin.unlink(...keys);
    }
  }
  prefixes.clear();
  await Promise.all(closers.splice(0).map((close) => close()));
  await Promise.all(clients.splice(0).map((client) => client.quit()));
});

afterAll(async () => {
  await admin.quit();
});

const sha1 = (line: string): string => createHash('sha1').update(line).digest('hex');

async function newRun(store: ParleyStore, tenant = TENANT): Promise<NewRun> {
  const run: NewRun = { tenant, runId: randomUUID(), owner: 'alice', agent: 'demo', task: 'Plan a team offsite', trigger: 'api' };
  expect(await store.runs.create(run)).toEqual({ created: true, wake: 0 });
  return run;
}

async function acquire(store: ParleyStore, run: NewRun, token: string = randomUUID()): Promise<Lease> {
  expect(await store.runs.acquire(run.tenant, run.runId, run.owner, token)).toMatchObject({ status: 'acquired', run: { id: run.runId, status: 'running' } });
  return { tenant: run.tenant, runId: run.runId, owner: run.owner, token };
}

/**
 * A run that failed while its question was open (a job out of attempts on a run put back to
 * queued); `due`: the question's deadline has passed; `gone`: the run's keys are gone after its retention.
 */
async function endedAsking(options: { due: boolean; gone: boolean }) {
  const store = makeStore();
  const k = store.ctx.keys;
  const run = await newRun(store);
  const lease = await acquire(store, run);
  const interaction = await parkAsking(store, lease, options.due ? { ...request(run), requestedAt: new Date(Date.now() - 3601 * 1000).toISOString() } : request(run));
  await admin.hset(k.run(TENANT, run.runId), 'status', 'queued');
  expect(await store.runs.end({ ...lease, token: '' }, { status: 'failed', reason: 'internal_error', error: 'x' }, false)).toMatchObject({ status: 'ended' });
  if (options.gone) {
    await admin.del(k.run(TENANT, run.runId), k.runLog(TENANT, run.runId), k.runEventSeqs(TENANT, run.runId), k.runInbox(TENANT, run.runId));
  }
  return { store, k, run, interaction };
}

function request(run: NewRun, interactionId: string = randomUUID()): InteractionRequest {
  return {
    tenant: run.tenant,
    runId: run.runId,
    interactionId,
    owner: run.owner,
    agent: run.agent,
    waitReason: 'question',
    prompt: CHOICE,
    timeoutSecs: 3600,
    requestedAt: new Date().toISOString(),
  };
}

/** Parks the run on a new interaction, opened in the same step; returns it as stored. */
async function parkAsking(store: ParleyStore, lease: Lease, open: InteractionRequest): Promise<Interaction> {
  expect(await store.runs.park(lease, open.waitReason, open.interactionId, open)).toMatchObject({ status: 'parked' });
  const interaction = await store.interactions.get(open.tenant, open.interactionId);
  expect(interaction).toMatchObject({ id: open.interactionId, status: 'open' });
  return interaction!;
}

/** A run parked on an open question, as a worker leaves it. */
async function waitingRun(store: ParleyStore): Promise<{ run: NewRun; lease: Lease; interaction: Interaction }> {
  const run = await newRun(store);
  const lease = await acquire(store, run);
  const interaction = await parkAsking(store, lease, request(run));
  return { run, lease, interaction };
}

/** The messages published on the store's event channel from now on, as they arrive. */
async function publishedMessages(store: ParleyStore): Promise<PublishedMessage[]> {
  const published: PublishedMessage[] = [];
  const subscriber = new Redis(REDIS_URL);
  clients.push(subscriber);
  subscriber.on('message', (_channel: string, message: string) => published.push(JSON.parse(message) as PublishedMessage));
  await subscriber.subscribe(store.ctx.keys.eventsChannel());
  return published;
}

function events(store: ParleyStore, tenant = TENANT, since = 0): Promise<ParleyEvent[]> {
  return store.events.readTenant(tenant, since, 1000);
}

/** 2026-01-01T00:00:00Z, where the seq floor (10 µs units of the Redis clock) starts. */
const SEQ_EPOCH_S = 1_767_225_600;

function expectIncreasing(seqs: number[]): void {
  expect(seqs.every((seq, i) => i === 0 || seq > seqs[i - 1])).toBe(true);
}

function answers(log: LogEntry[]): Array<Extract<LogEntry, { type: 'answer' }>> {
  return log.filter((entry): entry is Extract<LogEntry, { type: 'answer' }> => entry.type === 'answer');
}

function runHash(store: ParleyStore, run: NewRun): Promise<Record<string, string>> {
  return store.ctx.redis.hgetall(store.ctx.keys.run(run.tenant, run.runId));
}

async function waitForTakeover(store: ParleyStore, run: NewRun, token: string): Promise<Lease> {
  const refusals: AcquireResult[] = [];
  await waitFor(
    async () => {
      const result = await store.runs.acquire(run.tenant, run.runId, run.owner, token);
      if (result.status !== 'acquired') {
        refusals.push(result);
      }
      return result.status === 'acquired';
    },
    { timeoutMs: 5000, intervalMs: 10, message: `token ${token} to take run ${run.runId} over` },
  );
  // Until then every attempt was refused as busy, for no longer than one lease.
  for (const refusal of refusals) {
    expect(refusal).toEqual({ status: 'busy', retryInMs: expect.any(Number) });
    expect(refusal.status === 'busy' && refusal.retryInMs > 0 && refusal.retryInMs <= store.ctx.options.leaseMs).toBe(true);
  }
  return { tenant: run.tenant, runId: run.runId, owner: run.owner, token };
}

describe('create and acquire', () => {
  it('creates a queued run once, with its task as the first log entry and two events', async () => {
    const store = makeStore();
    const run = await newRun(store);
    expect(await store.runs.get(TENANT, run.runId)).toMatchObject({ id: run.runId, tenant: TENANT, owner: 'alice', status: 'queued', agent: 'demo' });
    expect(await store.runs.readLog(TENANT, run.runId)).toEqual([{ type: 'task', text: 'Plan a team offsite', at: expect.any(String) }]);

    expect(await store.runs.create({ ...run, task: 'another task' })).toEqual({ created: false });
    expect(await store.runs.readLog(TENANT, run.runId)).toHaveLength(1);
    expect((await store.runs.get(TENANT, run.runId))?.task).toBe('Plan a team offsite');
    const created = await events(store);
    expect(created.map((e) => e.type)).toEqual(['run.created', 'run.status']);
    expectIncreasing(created.map((e) => e.seq));
  });

  it('one advancer: a second token is busy while the first lease lasts', async () => {
    const store = makeStore({ leaseMs: 2000 });
    const run = await newRun(store);
    const first = await acquire(store, run, 'token-a');
    expect((await store.runs.get(TENANT, run.runId))?.status).toBe('running');

    const second = await store.runs.acquire(TENANT, run.runId, run.owner, 'token-b');
    expect(second).toEqual({ status: 'busy', retryInMs: expect.any(Number) });
    expect(second.status === 'busy' && second.retryInMs > 0 && second.retryInMs <= 2000).toBe(true);
    expect((await runHash(store, run)).lease).toBe('token-a');

    expect(await store.runs.renew(first)).toBe('held');
    expect(await store.runs.renew({ ...first, token: 'token-b' })).toBe('lost');
    // The failed acquire changed nothing and emitted nothing.
    expect((await events(store)).map((e) => e.type)).toEqual(['run.created', 'run.status', 'run.status']);
  });

  it("hands back the run as it stands under the new lease; with no owner given, the run's own owner is on the event", async () => {
    const store = makeStore();
    const run = await newRun(store);
    const acquired = await store.runs.acquire(TENANT, run.runId, '', 'token-a', { worker: 'worker-7' });
    expect(acquired).toEqual({ status: 'acquired', run: await store.runs.get(TENANT, run.runId), pendingMessages: 0, stopAsked: false, logLines: [] });
    expect(acquired).toMatchObject({ run: { owner: 'alice', status: 'running', agent: 'demo', task: 'Plan a team offsite' } });
    expect((await events(store)).at(-1)).toMatchObject({ type: 'run.status', owner: 'alice', data: { status: 'running' } });
    expect((await runHash(store, run)).worker).toBe('worker-7');
  });

  it('reads the log from the entry asked for in the same step, and not when asked for none', async () => {
    const store = makeStore({ leaseMs: 200 });
    const run = await newRun(store);
    const log = await store.runs.readLogLines(TENANT, run.runId, 0);
    expect(log.length).toBeGreaterThan(0);
    const first = await store.runs.acquire(TENANT, run.runId, '', 'token-a', { logFrom: 0 });
    expect(first).toMatchObject({ status: 'acquired', logLines: log });
    await waitForTakeover(store, run, 'token-b');
    const holder = { tenant: TENANT, runId: run.runId, owner: run.owner, token: 'token-b' };
    expect(await store.runs.append(holder, { type: 'task', text: 'more', at: new Date().toISOString() })).toMatchObject({ status: 'ok', previousSha1: sha1(log.at(-1)!) });
    // Events alone (streamed deltas) append no entry: no digest is computed for them.
    expect(await store.runs.append(holder, null, [{ type: 'message.delta', data: { text: 'Hel' } }])).toEqual({ status: 'ok', length: log.length + 1, previousSha1: null });
    await store.runs.release({ tenant: TENANT, runId: run.runId, owner: run.owner, token: 'token-b' });
    const tail = await store.runs.acquire(TENANT, run.runId, '', 'token-c', { logFrom: log.length - 1 });
    expect(tail).toMatchObject({ status: 'acquired', logLines: [log.at(-1), expect.stringContaining('"text":"more"')] });
  });

  it('does not hand back a run a stop was asked of: its holder is told to end it', async () => {
    const store = makeStore();
    const run = await newRun(store);
    const lease = await acquire(store, run, 'token-a');
    expect(await store.runs.renew(lease)).toBe('held');
    expect(await store.runs.cancel(run, BOB, null)).toEqual({ status: 'requested' });
    // Its heartbeat hears of it too (the holder gives up a model call it waits on).
    expect(await store.runs.renew(lease)).toBe('stop_requested');
    expect(await store.runs.renew({ ...lease, token: 'token-b' })).toBe('lost');
    expect(await store.runs.release({ ...lease, token: 'token-b' })).toBe('lost');
    expect(await store.runs.release(lease)).toBe('cancelled');
    expect(await runHash(store, run)).toMatchObject({ status: 'running', lease: 'token-a', cancel: '1' });
    expect(await store.runs.cancel(run, BOB, null, 'token-a')).toMatchObject({ status: 'cancelled' });
  });

  it('after a stop was asked, only the record of what already happened is appended, by the holder, without a stage move', async () => {
    const store = makeStore();
    const run = await newRun(store);
    const lease = await acquire(store, run, 'token-a');
    expect(await store.runs.cancel(run, BOB, null)).toEqual({ status: 'requested' });
    const result: LogEntry = { type: 'tool_result', toolUseId: 'tu-1', effectId: 'fx-1', name: 'shell', content: 'ran', isError: false, at: new Date().toISOString() };
    const resultEvent = { type: 'tool.result' as const, data: { toolUseId: 'tu-1', effectId: 'fx-1', name: 'shell', isError: false, content: 'ran' } };
    const before = await store.runs.readLogLines(TENANT, run.runId, 0);

    // A new step's entries are refused; so is a record by anyone but the holder.
    expect(await store.runs.append(lease, { type: 'assistant', text: 'more', toolCalls: [], at: new Date().toISOString() })).toEqual({ status: 'cancelled' });
    expect(await store.runs.append({ ...lease, token: 'token-b' }, result, [resultEvent], '', true)).toEqual({ status: 'lost' });
    expect(await store.runs.readLogLines(TENANT, run.runId, 0)).toEqual(before);

    // The holder's record of a call that ran is kept, its event sent; a stage move with it is not made.
    const recorded = await store.runs.append(lease, result, [resultEvent], 'review', true);
    expect(recorded).toEqual({ status: 'cancelled', recorded: { length: before.length + 1, previousSha1: sha1(before.at(-1)!) } });
    expect((await store.runs.readLog(TENANT, run.runId)).at(-1)).toEqual(result);
    expect((await events(store)).filter((e) => e.runId === run.runId && e.type === 'tool.result')).toHaveLength(1);
    expect((await runHash(store, run)).stage).toBeUndefined();
  });

  it('a new token takes over once the lease has run out', async () => {
    const store = makeStore({ leaseMs: 200 });
    const run = await newRun(store);
    await acquire(store, run, 'token-a');
    const before = await events(store);

    await waitForTakeover(store, run, 'token-b');
    const hash = await runHash(store, run);
    expect(hash).toMatchObject({ status: 'running', lease: 'token-b' });
    expect(Number(hash.leaseUntil)).toBeGreaterThan(Date.now() - 50);
    // running → running is no status change: no event.
    expect(await events(store)).toEqual(before);
  });

  it('says whose lease ran out when it takes a run over, and nothing when no one held the run', async () => {
    const store = makeStore({ leaseMs: 200 });
    const run = await newRun(store);
    const first = await store.runs.acquire(run.tenant, run.runId, run.owner, 'token-a', { worker: 'worker-a' });
    expect(first.status === 'acquired' && first).not.toHaveProperty('takenOverFrom');
    const taken = await waitFor(
      async () => {
        const result = await store.runs.acquire(run.tenant, run.runId, run.owner, 'token-b', { worker: 'worker-b' });
        return result.status === 'acquired' ? result : undefined;
      },
      { timeoutMs: 5000, intervalMs: 10, message: 'worker-b to take the run over' },
    );
    expect(taken).toMatchObject({ takenOverFrom: 'worker-a', run: { status: 'running' } });
  });

  it('a run with nothing to do is idle: waiting, ended or missing', async () => {
    const store = makeStore();
    const { run } = await waitingRun(store);
    expect(await store.runs.acquire(TENANT, run.runId, run.owner, 'other')).toEqual({ status: 'idle', runStatus: 'waiting' });
    expect(await store.runs.acquire(TENANT, randomUUID(), run.owner, 'other')).toEqual({ status: 'idle', runStatus: 'missing' });

    const done = await newRun(store);
    const lease = await acquire(store, done);
    expect(await store.runs.end(lease, { status: 'finished', reason: 'finish', summary: 'ok' })).toEqual({ status: 'ended', parentWake: null });
    expect(await store.runs.acquire(TENANT, done.runId, done.owner, 'other')).toEqual({ status: 'idle', runStatus: 'finished' });
  });
});

describe('fencing', () => {
  it("after a takeover the old token's append, park, end and workspace writes are refused and write nothing", async () => {
    const store = makeStore({ leaseMs: 200 });
    const run = await newRun(store);
    const stale = await acquire(store, run, 'token-a');
    const fresh = await waitForTakeover(store, run, 'token-b');

    const logBefore = await store.runs.readLog(TENANT, run.runId);
    const seqBefore = await store.events.lastSeq(TENANT);
    const entry: LogEntry = { type: 'assistant', text: 'stale thoughts', toolCalls: [], at: new Date().toISOString() };

    expect(await store.runs.append(stale, entry, [{ type: 'message', data: { text: 'stale thoughts' } }])).toEqual({ status: 'lost' });
    expect(await store.runs.park(stale, 'question', randomUUID())).toEqual({ status: 'lost' });
    expect(await store.runs.end(stale, { status: 'finished', reason: 'finish' })).toEqual({ status: 'lost' });
    expect(await store.runs.renew(stale)).toBe('lost');
    const workspace = new RedisWorkspace(store.ctx, stale, 1024);
    await expect(workspace.write('fx-1', 'notes.md', 'stale')).rejects.toBeInstanceOf(LeaseLostError);
    await expect(workspace.delete('fx-2', 'notes.md')).rejects.toThrow(LeaseLostError);

    expect(await store.runs.readLog(TENANT, run.runId)).toEqual(logBefore);
    expect(await store.events.lastSeq(TENANT)).toBe(seqBefore);
    expect(await store.ctx.redis.exists(store.ctx.keys.workspace(TENANT, run.runId), store.ctx.keys.effects(TENANT, run.runId))).toBe(0);
    expect(await runHash(store, run)).toMatchObject({ status: 'running', lease: 'token-b' });
    expect((await runHash(store, run)).wsBytes).toBeUndefined();

    // The new holder goes on as if nothing happened.
    const [first] = await store.runs.readLogLines(TENANT, run.runId, 0);
    expect(await store.runs.append(fresh, entry)).toEqual({ status: 'ok', length: 2, previousSha1: sha1(first) });
    expect(await new RedisWorkspace(store.ctx, fresh, 1024).write('fx-1', 'notes.md', 'fresh')).toMatchObject({ status: 'applied' });
    expect(await store.ctx.redis.hget(store.ctx.keys.workspace(TENANT, run.runId), 'notes.md')).toBe('fresh');
  });
});

describe('lost wake-up', () => {
  it('a wake that arrives before the worker parks makes park say continue and open nothing; the next park parks', async () => {
    const store = makeStore();
    const run = await newRun(store);
    const lease = await acquire(store, run);
    // What a sub-agent's end does to a running parent (see 'sub-agents'): a wake in the inbox.
    await admin.rpush(store.ctx.keys.runInbox(TENANT, run.runId), 'child');
    const seq = await store.events.lastSeq(TENANT);

    const asked = request(run);
    const question: LogEntry = { type: 'question', toolUseId: 'toolu_1', effectId: 'fx_1', interactionId: asked.interactionId, prompt: asked.prompt, at: asked.requestedAt };
    expect(await store.runs.park(lease, 'question', asked.interactionId, asked, question)).toEqual({ status: 'continue' });
    // The question is recorded all the same: the next pass finds it unanswered and parks on it.
    expect((await store.runs.readLog(TENANT, run.runId)).at(-1)).toEqual(question);
    const after = await store.runs.get(TENANT, run.runId);
    expect(after).toMatchObject({ status: 'running' });
    expect(after?.pendingInteractionId).toBeUndefined();
    expect(await store.interactions.get(TENANT, asked.interactionId)).toBeNull();
    expect(await admin.zcard(store.ctx.keys.openInteractions(TENANT))).toBe(0);
    expect(await store.events.lastSeq(TENANT)).toBe(seq);

    // The wake was consumed: the same question parks on the next pass, and opens its interaction then.
    expect(await parkAsking(store, lease, asked)).toMatchObject({ id: asked.interactionId, waitReason: 'question' });
    expect(await store.runs.readLog(TENANT, run.runId)).toHaveLength(2); // task, question: recorded once
  });

  it('a model turn that only asks is appended with its question, its events before the opening, in the park step', async () => {
    const store = makeStore();
    const run = await newRun(store);
    const lease = await acquire(store, run);
    const seq = await store.events.lastSeq(TENANT);
    const asked = request(run);
    const turn: LogEntry = { type: 'assistant', text: 'One question.', toolCalls: [{ toolUseId: 'toolu_1', effectId: 'fx_1', name: 'ask_user_text', input: { question: 'Where?' } }], at: asked.requestedAt };
    const question: LogEntry = { type: 'question', toolUseId: 'toolu_1', effectId: 'fx_1', interactionId: asked.interactionId, prompt: asked.prompt, at: asked.requestedAt };
    const turnEvents: EventDraft[] = [
      { type: 'message', data: { text: 'One question.' } },
      { type: 'tool.call', data: { toolUseId: 'toolu_1', effectId: 'fx_1', name: 'ask_user_text', input: { question: 'Where?' } } },
    ];

    expect(await store.runs.park(lease, 'question', asked.interactionId, asked, [turn, question], turnEvents)).toMatchObject({ status: 'parked' });
    expect((await store.runs.readLog(TENANT, run.runId)).slice(-2)).toEqual([turn, question]);
    const emitted = (await events(store)).filter((e) => e.seq > seq);
    expect(emitted.map((e) => e.type)).toEqual(['message', 'tool.call', 'interaction.opened', 'run.status']);
    expect(emitted[1].data).toEqual(turnEvents[1].data);
    expect(emitted[3].data).toEqual({ status: 'waiting', waitReason: 'question' });
    expect(await store.interactions.get(TENANT, asked.interactionId)).toMatchObject({ status: 'open', prompt: asked.prompt });

    // A wake meanwhile: the turn and its question are recorded with their events, nothing opens; a
    // stop meanwhile: nothing of the turn is written.
    const woken = await newRun(store);
    const wokenLease = await acquire(store, woken);
    await admin.rpush(store.ctx.keys.runInbox(TENANT, woken.runId), 'message');
    const again = request(woken);
    const before = await store.events.lastSeq(TENANT);
    expect(await store.runs.park(wokenLease, 'question', again.interactionId, again, [turn, { ...question, interactionId: again.interactionId }], turnEvents)).toEqual({ status: 'continue' });
    expect((await store.runs.readLog(TENANT, woken.runId)).map((e) => e.type)).toEqual(['task', 'assistant', 'question']);
    expect((await events(store)).filter((e) => e.seq > before).map((e) => e.type)).toEqual(['message', 'tool.call']);
    expect(await store.interactions.get(TENANT, again.interactionId)).toBeNull();

    const stopped = await newRun(store);
    const stoppedLease = await acquire(store, stopped);
    expect(await store.runs.cancel({ tenant: TENANT, runId: stopped.runId, owner: stopped.owner }, ALICE, null)).toEqual({ status: 'requested' });
    const untouched = await store.events.lastSeq(TENANT);
    const refused = request(stopped);
    expect(await store.runs.park(stoppedLease, 'question', refused.interactionId, refused, [turn, { ...question, interactionId: refused.interactionId }], turnEvents)).toEqual({ status: 'cancelled' });
    expect((await store.runs.readLog(TENANT, stopped.runId)).map((e) => e.type)).toEqual(['task']);
    expect(await store.events.lastSeq(TENANT)).toBe(untouched);
  });

  it('an answer to a waiting run returns the bumped wake counter and queues the run', async () => {
    const store = makeStore();
    const { run, interaction } = await waitingRun(store);
    expect(await store.runs.get(TENANT, run.runId)).toMatchObject({ status: 'waiting', waitReason: 'question', pendingInteractionId: interaction.id });
    const seq = await store.events.lastSeq(TENANT);

    const resolved = await store.interactions.resolve({ interaction, outcome: 'answered', answer: RETREAT, by: ALICE });
    expect(resolved).toMatchObject({ status: 'resolved', wake: 1 });
    const queued = await store.runs.get(TENANT, run.runId);
    expect(queued?.status).toBe('queued');
    expect(queued?.waitReason).toBeUndefined();
    expect(queued?.pendingInteractionId).toBeUndefined();
    expect((await events(store, TENANT, seq)).map((e) => [e.type, e.data])).toEqual([
      ['interaction.resolved', { interactionId: interaction.id, outcome: 'answered', by: ALICE, at: expect.any(String) }],
      ['run.status', { status: 'queued' }],
    ]);

    // Another cycle bumps the counter again, so each resume job has its own id.
    const lease = await acquire(store, run);
    const second = await parkAsking(store, lease, request(run));
    expect(await store.interactions.resolve({ interaction: second, outcome: 'expired', by: { kind: 'deadline' } })).toMatchObject({ status: 'resolved', wake: 2 });
  });
});

describe('park opens the interaction and files its deadline', () => {
  it('stores the interaction as a flat hash (a compact listpack for a short prompt) that reads back as interaction.opened announced it', async () => {
    const store = makeStore();
    const run = await newRun(store);
    const lease = { tenant: TENANT, runId: run.runId, owner: run.owner, token: 'token-a' };
    expect((await store.runs.acquire(TENANT, run.runId, run.owner, lease.token, { worker: 'worker-7' })).status).toBe('acquired');
    expect(await admin.hget(store.ctx.keys.run(TENANT, run.runId), 'worker')).toBe('worker-7');
    const seq = await store.events.lastSeq(TENANT);
    const checkpoint = { stage: 'draft', point: 'publish', round: 0, purpose: 'decide' as const };
    const asked = { ...request(run), waitReason: 'checkpoint' as const, prompt: { kind: 'free_text' as const, prompt: 'Ship it?' }, checkpoint };
    const interaction = await parkAsking(store, lease, asked);
    const opened = (await events(store, TENANT, seq)).find((e) => e.type === 'interaction.opened');
    expect(opened?.data).toEqual({ interaction });
    expect(interaction).toMatchObject({ id: asked.interactionId, tenant: TENANT, runId: run.runId, owner: 'alice', agent: 'demo', checkpoint, deadline: expect.any(String) });
    expect(await admin.object('ENCODING', store.ctx.keys.interaction(TENANT, interaction.id))).toBe('listpack');
    expect(await store.interactions.get(TENANT, interaction.id)).toEqual(interaction);

    // What a parked run keeps is small: times as epoch ms, no lease, no worker; it is not in flight.
    const k = store.ctx.keys;
    const [createdAt, deadline] = await admin.hmget(k.interaction(TENANT, interaction.id), 'createdAt', 'deadline');
    expect([createdAt, deadline]).toEqual([String(Date.parse(interaction.createdAt)), String(Date.parse(interaction.deadline ?? ''))]);
    const hash = await admin.hgetall(k.run(TENANT, run.runId));
    expect(hash).toMatchObject({ status: 'waiting', createdAt: expect.stringMatching(/^\d{13}$/), updatedAt: expect.stringMatching(/^\d{13}$/) });
    expect(Object.keys(hash).filter((field) => ['lease', 'leaseUntil', 'worker'].includes(field))).toEqual([]);
    expect(await store.runs.get(TENANT, run.runId)).toMatchObject({ createdAt: new Date(Number(hash.createdAt)).toISOString() });
    expect(await admin.zscore(k.inflightRuns(TENANT), run.runId)).toBeNull();
  });

  it('indexes open interactions by deadline; a timer is asked for only for the earliest; resolving or stopping drops the entry', async () => {
    const store = makeStore();
    const k = store.ctx.keys;
    // The open index: ids by deadline, those without one past every deadline.
    const deadlines = async () => {
      const flat = await admin.zrange(k.openInteractions(TENANT), '0', '-1', 'WITHSCORES');
      return flat.flatMap((member, i) => (i % 2 === 0 ? [[member, Number(flat[i + 1]) >= NO_DEADLINE_SCORE ? 'none' : flat[i + 1]]] : []));
    };
    const at = (ms: number) => new Date(ms - 3600 * 1000).toISOString(); // requestedAt for a deadline at `ms`
    const base = Date.now() + 3600 * 1000;

    const first = await newRun(store);
    const firstLease = await acquire(store, first);
    const firstAsk = { ...request(first), requestedAt: at(base) };
    expect(await store.runs.park(firstLease, 'question', firstAsk.interactionId, firstAsk)).toEqual({ status: 'parked', deadlineTimer: base });
    expect(await admin.get(k.deadlineTimer(TENANT))).toBe(String(base));

    // Later than the timer: no new timer job (the earlier one re-arms itself for it).
    const later = await newRun(store);
    const laterAsk = { ...request(later), requestedAt: at(base + 5000) };
    expect(await store.runs.park(await acquire(store, later), 'question', laterAsk.interactionId, laterAsk)).toEqual({ status: 'parked', deadlineTimer: null });
    // Earlier than the timer: a timer job for it.
    const sooner = await newRun(store);
    const soonerAsk = { ...request(sooner), requestedAt: at(base - 5000) };
    expect(await store.runs.park(await acquire(store, sooner), 'question', soonerAsk.interactionId, soonerAsk)).toEqual({ status: 'parked', deadlineTimer: base - 5000 });
    // No deadline at all: last in the index, and no timer.
    const forever = await newRun(store);
    const foreverAsk = { ...request(forever), timeoutSecs: 0 };
    expect(await store.runs.park(await acquire(store, forever), 'question', foreverAsk.interactionId, foreverAsk)).toEqual({ status: 'parked', deadlineTimer: null });
    expect(await deadlines()).toEqual([
      [soonerAsk.interactionId, String(base - 5000)],
      [firstAsk.interactionId, String(base)],
      [laterAsk.interactionId, String(base + 5000)],
      [foreverAsk.interactionId, 'none'],
    ]);
    expect(await store.deadlines.earliest(TENANT)).toBe(base - 5000);

    // A takeover parks again on the same question: nothing is opened, filed or counted twice.
    const seq = await store.events.lastSeq(TENANT);
    const gauges = await admin.hgetall(k.gauges(TENANT));
    const takeover = await store.ctx.redis.hset(k.run(TENANT, first.runId), 'status', 'queued').then(() => acquire(store, first));
    expect(await store.runs.park(takeover, 'question', firstAsk.interactionId, { ...firstAsk, requestedAt: at(base - 99_000) })).toEqual({ status: 'parked', deadlineTimer: null });
    expect((await events(store, TENANT, seq)).map((e) => e.type)).toEqual(['run.status', 'run.status']); // running, waiting
    expect(await admin.hget(k.gauges(TENANT), 'open:multiple_choice')).toBe(gauges['open:multiple_choice']);
    expect(await store.deadlines.earliest(TENANT)).toBe(base - 5000);

    // An answer drops its deadline in the same step; so does a stop.
    const answered = (await store.interactions.get(TENANT, soonerAsk.interactionId))!;
    expect(await store.interactions.resolve({ interaction: answered, outcome: 'answered', answer: RETREAT, by: ALICE })).toMatchObject({ status: 'resolved' });
    expect(await store.runs.cancel(later, BOB, { id: laterAsk.interactionId, waitReason: 'question' })).toMatchObject({ status: 'cancelled' });
    expect(await deadlines()).toEqual([
      [firstAsk.interactionId, String(base)],
      [foreverAsk.interactionId, 'none'],
    ]);

    // Re-arming points the timer at the earliest deadline left, or clears it.
    expect(await store.deadlines.rearm(TENANT)).toBe(base);
    expect(await admin.get(k.deadlineTimer(TENANT))).toBe(String(base));
    const stillOpen = (await store.interactions.get(TENANT, firstAsk.interactionId))!;
    expect(await store.interactions.resolve({ interaction: stillOpen, outcome: 'answered', answer: RETREAT, by: ALICE })).toMatchObject({ status: 'resolved' });
    expect(await store.deadlines.rearm(TENANT)).toBeNull(); // what is left waits forever
    expect(await admin.exists(k.deadlineTimer(TENANT))).toBe(0);
    expect(await store.deadlines.earliest(TENANT)).toBeNull();

    // A timer already past due (sweeping now, or its job lost) does not cover a new deadline.
    await admin.set(k.deadlineTimer(TENANT), String(Date.now() - 1000));
    const next = await newRun(store);
    const nextAsk = { ...request(next), requestedAt: at(base) };
    expect(await store.runs.park(await acquire(store, next), 'question', nextAsk.interactionId, nextAsk)).toEqual({ status: 'parked', deadlineTimer: base });
  });
});

describe('deadline sweep', () => {
  it('expires what is due in one step, earliest first, as a resolve by the deadline would; leaves the rest', async () => {
    const store = makeStore();
    const k = store.ctx.keys;
    const past = (secondsAgo: number) => new Date(Date.now() - 3600 * 1000 - secondsAgo * 1000).toISOString(); // requestedAt
    const asked = async (ask: Partial<InteractionRequest>) => {
      const run = await newRun(store);
      const lease = await acquire(store, run);
      const interaction = await parkAsking(store, lease, { ...request(run), ...ask });
      return { run, interaction };
    };
    const older = await asked({ requestedAt: past(20) });
    const approval = await asked({ requestedAt: past(10), waitReason: 'approval', prompt: APPROVAL });
    const claimed = await asked({ requestedAt: past(5), waitReason: 'approval', prompt: APPROVAL });
    expect(await store.interactions.claim(claimed.interaction, { ...ADA, subject: 'ada' }, Date.now() + 60_000)).toMatchObject({ status: 'claimed' });
    const answered = await asked({ requestedAt: past(1) });
    await store.interactions.resolve({ interaction: answered.interaction, outcome: 'answered', answer: RETREAT, by: ALICE });
    const notDue = await asked({});
    const forever = await asked({ timeoutSecs: 0 });
    const seq = await store.events.lastSeq(TENANT);

    const first = await store.deadlines.expireDue(TENANT, 2);
    expect(first).toEqual({
      expired: [
        { interactionId: older.interaction.id, runId: older.run.runId, wake: 1, deadlineMs: Date.parse(older.interaction.deadline!) },
        { interactionId: approval.interaction.id, runId: approval.run.runId, wake: 1, deadlineMs: Date.parse(approval.interaction.deadline!) },
      ],
      dropped: 0,
      redisNowMs: expect.any(Number),
    });
    // Judged by Redis's clock (this host's here).
    expect(Math.abs(first.redisNowMs - Date.now())).toBeLessThan(1000);
    const second = await store.deadlines.expireDue(TENANT, 10);
    expect(second.expired.map((e) => e.interactionId)).toEqual([claimed.interaction.id]); // claims do not bind a deadline
    expect(await store.deadlines.expireDue(TENANT, 10)).toMatchObject({ expired: [], dropped: 0 });

    for (const { run, interaction } of [older, approval, claimed]) {
      expect(await store.interactions.get(TENANT, interaction.id)).toMatchObject({ status: 'expired', resolvedBy: { kind: 'deadline' }, resolvedAt: expect.any(String) });
      expect(answers(await store.runs.readLog(TENANT, run.runId))).toEqual([
        { type: 'answer', interactionId: interaction.id, outcome: 'expired', by: { kind: 'deadline' }, at: expect.any(String) },
      ]);
      expect(await store.runs.get(TENANT, run.runId)).toMatchObject({ status: 'queued' });
      expect(await admin.ttl(k.interaction(TENANT, interaction.id))).toBeGreaterThan(0);
    }
    expect((await store.interactions.get(TENANT, claimed.interaction.id))?.claim).toBeUndefined();
    // The same events a resolve by the deadline emits, in the run's replay too.
    const emitted = await events(store, TENANT, seq);
    expect(emitted.map((e) => [e.runId, e.type, e.data])).toEqual(
      [older, approval, claimed].flatMap(({ run, interaction }) => [
        [run.runId, 'interaction.resolved', { interactionId: interaction.id, outcome: 'expired', by: { kind: 'deadline' }, at: expect.any(String), ...(interaction.waitReason === 'approval' ? { decision: 'deny' } : {}) }],
        [run.runId, 'run.status', { status: 'queued' }],
      ]),
    );
    expect((await store.events.readRun(TENANT, older.run.runId, seq, 10)).map((e) => e.type)).toEqual(['interaction.resolved', 'run.status']);
    expect(emitted.every((e) => e.owner === 'alice')).toBe(true);
    // Out of the indexes and the gauges; what is not due, or never is, stays.
    expect(await admin.zrange(k.openInteractions(TENANT), '0', '-1')).toEqual([notDue.interaction.id, forever.interaction.id]);
    expect(await admin.zcard(k.openApprovals(TENANT))).toBe(0);
    expect(await admin.hgetall(k.gauges(TENANT))).toMatchObject({ 'open:tool_approval': '0', 'open:multiple_choice': '2', parked: '2' });
  });

  it("expires the question of a run that ended, still kept, into its event history but not its log", async () => {
    const { store, k, run, interaction } = await endedAsking({ due: true, gone: false });
    const logLength = await admin.llen(k.runLog(TENANT, run.runId));

    expect(await store.deadlines.expireDue(TENANT, 10)).toMatchObject({ expired: [expect.objectContaining({ interactionId: interaction.id, wake: null })], dropped: 0 });
    expect((await store.events.readRun(TENANT, run.runId, 0, 100)).at(-1)).toMatchObject({ type: 'interaction.resolved', data: { interactionId: interaction.id } });
    expect(await admin.llen(k.runLog(TENANT, run.runId))).toBe(logLength);
    expect(await admin.ttl(k.runEventSeqs(TENANT, run.runId))).toBeGreaterThan(0);
  });

  it("expires the question of a run that ended without touching the run's keys", async () => {
    const { store, k, run, interaction } = await endedAsking({ due: true, gone: true });
    const seq = await store.events.lastSeq(TENANT);

    expect(await store.deadlines.expireDue(TENANT, 10)).toMatchObject({ expired: [expect.objectContaining({ interactionId: interaction.id, wake: null })], dropped: 0 });
    expect(await store.interactions.get(TENANT, interaction.id)).toMatchObject({ status: 'expired' });
    expect((await events(store, TENANT, seq)).map((e) => [e.type, e.owner])).toEqual([['interaction.resolved', 'alice']]);
    expect(await admin.exists(k.run(TENANT, run.runId), k.runLog(TENANT, run.runId), k.runEventSeqs(TENANT, run.runId), k.runInbox(TENANT, run.runId))).toBe(0);
  });
});

describe('one answer, once', () => {
  it("an answer to the question of a run that ended, still kept, joins the run's event history but not its log", async () => {
    const { store, k, run, interaction } = await endedAsking({ due: false, gone: false });
    const logLength = await admin.llen(k.runLog(TENANT, run.runId));
    const ttl = await admin.ttl(k.runEventSeqs(TENANT, run.runId));
    expect(ttl).toBeGreaterThan(0);

    expect(await store.interactions.resolve({ interaction, outcome: 'answered', answer: RETREAT, by: ALICE })).toMatchObject({ status: 'resolved', wake: null });
    const history = await store.events.readRun(TENANT, run.runId, 0, 100);
    expect(history.at(-1)).toMatchObject({ type: 'interaction.resolved', data: { interactionId: interaction.id } });
    expect(await admin.llen(k.runLog(TENANT, run.runId))).toBe(logLength);
    expect(await admin.ttl(k.runEventSeqs(TENANT, run.runId))).toBeGreaterThan(0);
  });

  it("an answer to the question of a run that ended is recorded on the interaction only, without touching the run's keys", async () => {
    const { store, k, run, interaction } = await endedAsking({ due: false, gone: true });
    const seq = await store.events.lastSeq(TENANT);

    expect(await store.interactions.resolve({ interaction, outcome: 'answered', answer: RETREAT, by: ALICE })).toMatchObject({ status: 'resolved', wake: null });
    expect(await store.interactions.get(TENANT, interaction.id)).toMatchObject({ status: 'answered', answer: RETREAT });
    expect((await events(store, TENANT, seq)).map((e) => [e.type, e.owner])).toEqual([['interaction.resolved', 'alice']]);
    expect(await admin.exists(k.run(TENANT, run.runId), k.runLog(TENANT, run.runId), k.runEventSeqs(TENANT, run.runId), k.runInbox(TENANT, run.runId))).toBe(0);
  });

  it('a second resolve is a conflict naming the first resolver, and the log holds one answer', async () => {
    const store = makeStore();
    const { run, interaction } = await waitingRun(store);
    expect(await store.interactions.resolve({ interaction, outcome: 'answered', answer: RETREAT, by: ALICE })).toMatchObject({ status: 'resolved' });
    const seq = await store.events.lastSeq(TENANT);

    const other: Answer = { kind: 'multiple_choice', choices: [2], labels: ['Party'] };
    const second = await store.interactions.resolve({ interaction, outcome: 'answered', answer: other, by: BOB });
    expect(second).toEqual({
      status: 'conflict',
      interaction: expect.objectContaining({ id: interaction.id, status: 'answered', resolvedBy: ALICE, answer: RETREAT, resolvedAt: expect.any(String) }),
    });
    const late = await store.interactions.resolve({ interaction, outcome: 'expired', by: { kind: 'deadline' } });
    expect(late).toMatchObject({ status: 'conflict', interaction: { status: 'answered', resolvedBy: ALICE } });

    expect(answers(await store.runs.readLog(TENANT, run.runId))).toHaveLength(1);
    expect(await store.events.lastSeq(TENANT)).toBe(seq);
    expect(await store.interactions.get(TENANT, interaction.id)).toMatchObject({ status: 'answered', answer: RETREAT, resolvedBy: ALICE });
  });

  it('a resolve after the run was cancelled is a conflict naming who cancelled', async () => {
    const store = makeStore();
    const { run, interaction } = await waitingRun(store);
    expect(await store.runs.cancel(run, BOB, { id: interaction.id, waitReason: 'question' })).toEqual({ status: 'cancelled', parentWake: null });

    const result = await store.interactions.resolve({ interaction, outcome: 'answered', answer: RETREAT, by: ALICE });
    expect(result).toMatchObject({ status: 'conflict', interaction: { status: 'cancelled', resolvedBy: BOB } });
    const log = answers(await store.runs.readLog(TENANT, run.runId));
    expect(log.map((a) => [a.interactionId, a.outcome])).toEqual([[interaction.id, 'cancelled']]);
  });

  it('a resolve of an unknown interaction, or through another run, is missing and writes nothing', async () => {
    const store = makeStore();
    const { run, interaction } = await waitingRun(store);
    const seq = await store.events.lastSeq(TENANT);
    expect(await store.interactions.resolve({ interaction: { ...interaction, id: randomUUID() }, outcome: 'answered', answer: RETREAT, by: ALICE })).toEqual({
      status: 'missing',
    });
    expect(await store.interactions.resolve({ interaction: { ...interaction, runId: randomUUID() }, outcome: 'answered', answer: RETREAT, by: ALICE })).toEqual({
      status: 'missing',
    });
    expect(await store.events.lastSeq(TENANT)).toBe(seq);
    expect((await store.interactions.get(TENANT, interaction.id))?.status).toBe('open');
    expect((await store.runs.get(TENANT, run.runId))?.status).toBe('waiting');
  });

  it('20 concurrent resolves over separate connections: exactly one wins, the rest name the winner', async () => {
    const store = makeStore();
    const { run, interaction } = await waitingRun(store);
    const racers = Array.from({ length: 20 }, () => makeStore({ prefix: store.ctx.options.prefix }));
    const actors: Actor[] = racers.map((_, i) => ({ kind: 'user', subject: `user-${i}`, role: 'member' }));

    const results = await Promise.all(
      racers.map((racer, i) => racer.interactions.resolve({ interaction, outcome: 'answered', answer: { kind: 'multiple_choice', choices: [i % 3], labels: [LABELS[i % 3]] }, by: actors[i] })),
    );
    const winners = results.filter((r) => r.status === 'resolved');
    expect(winners).toHaveLength(1);
    expect(results.filter((r) => r.status === 'conflict')).toHaveLength(19);
    const winner = winners[0].status === 'resolved' ? winners[0].interaction.resolvedBy : undefined;
    for (const result of results) {
      if (result.status === 'conflict') {
        expect(result.interaction.resolvedBy).toEqual(winner);
      }
    }
    expect(winners[0]).toMatchObject({ wake: 1 });

    expect(answers(await store.runs.readLog(TENANT, run.runId))).toEqual([expect.objectContaining({ interactionId: interaction.id, by: winner })]);
    expect((await runHash(store, run)).wake).toBe('1');
    expect((await store.runs.get(TENANT, run.runId))?.status).toBe('queued');
    const all = await events(store);
    expect(all.filter((e) => e.type === 'interaction.resolved')).toHaveLength(1);
    expect(all.filter((e) => e.type === 'run.status' && e.data.status === 'queued')).toHaveLength(2); // created, then woken once
  });
});

describe('events', () => {
  it('every state change emits one event with the next per-tenant seq; readTenant(since) returns exactly what came after', async () => {
    const store = makeStore();
    const published = await publishedMessages(store);

    const run = await newRun(store);
    const lease = await acquire(store, run, 'token-a');
    expect(await store.runs.acquire(TENANT, run.runId, run.owner, 'token-b')).toMatchObject({ status: 'busy' }); // no event
    const said: LogEntry = { type: 'assistant', text: 'Hello', toolCalls: [], at: new Date().toISOString() };
    const [task] = await store.runs.readLogLines(TENANT, run.runId, 0);
    expect(await store.runs.append(lease, said, [{ type: 'message', data: { text: 'Hello' } }])).toEqual({ status: 'ok', length: 2, previousSha1: sha1(task) });
    expect(await store.runs.append({ ...lease, token: 'token-b' }, said, [{ type: 'message', data: { text: 'lost' } }])).toEqual({ status: 'lost' }); // no event
    const asked = request(run);
    const interaction = await parkAsking(store, lease, asked);
    await store.interactions.resolve({ interaction, outcome: 'answered', answer: RETREAT, by: ALICE });
    await store.interactions.resolve({ interaction, outcome: 'answered', answer: RETREAT, by: BOB }); // conflict: no event
    const again = await acquire(store, run);
    expect(await store.runs.end(again, { status: 'finished', reason: 'finish', summary: 'done' })).toEqual({ status: 'ended', parentWake: null });

    const all = await events(store);
    expect(all.map((e) => [e.type, e.type === 'run.status' ? e.data.status : ''])).toEqual([
      ['run.created', ''],
      ['run.status', 'queued'],
      ['run.status', 'running'],
      ['message', ''],
      ['interaction.opened', ''], // in the step that parks
      ['run.status', 'waiting'],
      ['interaction.resolved', ''],
      ['run.status', 'queued'],
      ['run.status', 'running'],
      ['run.status', 'finished'],
      ['run.finished', ''],
    ]);
    expectIncreasing(all.map((e) => e.seq));
    for (const event of all) {
      expect(event).toMatchObject({ tenant: TENANT, runId: run.runId, owner: 'alice', at: expect.any(String) });
    }
    const last = all[all.length - 1].seq;
    expect(await store.events.lastSeq(TENANT)).toBe(last);
    for (let i = 0; i <= all.length; i++) {
      expect(await store.events.readTenant(TENANT, i === 0 ? 0 : all[i - 1].seq, 1000)).toEqual(all.slice(i));
    }
    expect(await store.events.readTenant(TENANT, all[2].seq, 2)).toEqual(all.slice(3, 5));
    expect(await store.events.readRun(TENANT, run.runId, all[3].seq, 1000)).toEqual(all.slice(4));

    // Published live in the same step, in the same order, each naming the tenant's seq before it
    // (and the question, the run's wake counter as it parked): one message per step, holding that step's events.
    const named = all.map((event, i) => ({ ...event, prev: i === 0 ? 0 : all[i - 1].seq, ...(event.type === 'interaction.opened' ? { wake: 0 } : {}) }));
    const steps = [[0, 1], [2], [3], [4, 5], [6, 7], [8], [9, 10]];
    await waitFor(() => published.length >= steps.length, { timeoutMs: 5000, message: 'the published events' });
    expect(published).toEqual(steps.map((step) => step.map((i) => named[i])));

    // Another tenant has a sequence of its own and sees none of these.
    const other = await newRun(store, 'globex');
    expect((await events(store, 'globex')).map((e) => e.runId)).toEqual([other.runId, other.runId]);
    expect(await store.events.lastSeq(TENANT)).toBe(last);
  });

  it('publishes the events a script wrote before it failed, and still fails with its own error', async () => {
    const store = makeStore();
    const run = await newRun(store);
    const lease = await acquire(store, run);
    const messages = await publishedMessages(store);
    const k = store.ctx.keys;
    const { keys, args } = store.ctx.prologue(TENANT, run.runId, run.owner, new Date());
    const ixKey = k.interaction(TENANT, randomUUID());
    // park with one event to write first, then an interaction to open whose fields are one short: its HSET fails.
    const parkKeys = [...keys, k.run(TENANT, run.runId), k.runInbox(TENANT, run.runId), ixKey, k.openInteractions(TENANT), k.openApprovals(TENANT), k.runLog(TENANT, run.runId)];
    const parkArgs = [...args, lease.token, 'question', 'ix', '{"interaction":{}}', '', 'free_text', '', '1', 0, 1, 'message', '{"text":"before the failure"}', 'status'];
    await expect(store.ctx.scripts.run('park', parkKeys, parkArgs)).rejects.toThrow(/^ERR Wrong number of args calling Redis command from script/);
    const stored = await events(store);
    expect(stored[stored.length - 1]).toMatchObject({ type: 'message', data: { text: 'before the failure' } });
    await waitFor(() => messages.some((m) => Array.isArray(m) && m.some((e) => e.seq === stored[stored.length - 1].seq)), { timeoutMs: 5000, message: 'the event published' });
  });

  it('numbers events above the Redis clock floor, so a counter rolled back (an AOF that lost its last second) issues no seq twice', async () => {
    const store = makeStore();
    const [seconds] = await admin.time();
    const floorThen = (Number(seconds) - SEQ_EPOCH_S) * 100_000;
    const first = await newRun(store);
    const before = await events(store);
    expect(before[0].seq).toBeGreaterThanOrEqual(floorThen);
    // What a restart from an AOF one second old leaves: the counter as it was a second ago.
    await admin.set(store.ctx.keys.seq(TENANT), String(before[0].seq - 100_000));
    const second = await newRun(store);
    const after = await events(store, TENANT, before[before.length - 1].seq);
    expect(after.map((e) => e.runId)).toEqual([second.runId, second.runId]);
    expectIncreasing([...before, ...after].map((e) => e.seq));
    expect(before.map((e) => e.runId)).toEqual([first.runId, first.runId]);
  });
});

describe('in-flight index', () => {
  it("holds a run while it is queued or running: park takes it out, an answer puts it back; the end takes it out of the tenant's and the owner's active runs too", async () => {
    const store = makeStore();
    const k = store.ctx.keys;
    const inflight = () => admin.zrange(k.inflightRuns(TENANT), '0', '-1');
    const parked = async () => (await admin.hget(k.gauges(TENANT), 'parked')) ?? '0';
    const run: NewRun = { tenant: TENANT, runId: randomUUID(), owner: 'alice', agent: 'demo', task: 'Plan a team offsite', trigger: 'api' };
    await store.limits.admitRun(TENANT, run.owner, run.runId, { runsPerMinute: 0, userRunsPerMinute: 0, concurrentRuns: 5, userConcurrentRuns: 5, openInteractions: 0 });
    const ownerActive = () => admin.zrange(k.ownerActiveRuns(TENANT, run.owner), '0', '-1');
    expect([await admin.zrange(k.activeRuns(TENANT), '0', '-1'), await ownerActive()]).toEqual([[run.runId], [run.runId]]);
    await store.runs.create(run);
    expect(await inflight()).toEqual([run.runId]);
    const lease = await acquire(store, run);
    expect(await inflight()).toEqual([run.runId]);
    const interaction = await parkAsking(store, lease, request(run));
    expect([await inflight(), await parked()]).toEqual([[], '1']);
    await store.interactions.resolve({ interaction, outcome: 'answered', answer: RETREAT, by: ALICE });
    expect([await inflight(), await parked()]).toEqual([[run.runId], '0']);
    expect(await store.runs.cancel(run, BOB, null)).toMatchObject({ status: 'cancelled' });
    expect([await inflight(), await admin.zrange(k.activeRuns(TENANT), '0', '-1'), await ownerActive()]).toEqual([[], [], []]);
    // Not filed without a concurrent-run limit.
    await store.limits.admitRun(TENANT, run.owner, randomUUID(), { runsPerMinute: 0, userRunsPerMinute: 0, concurrentRuns: 0, userConcurrentRuns: 0, openInteractions: 0 });
    expect(await admin.exists(k.activeRuns(TENANT), k.ownerActiveRuns(TENANT, run.owner))).toBe(0);
  });

  it('the parked gauge never goes below zero', async () => {
    const store = makeStore();
    const { run, interaction } = await waitingRun(store);
    await admin.hset(store.ctx.keys.gauges(TENANT), 'parked', 0); // as if the gauge had been reset
    await store.interactions.resolve({ interaction, outcome: 'answered', answer: RETREAT, by: ALICE });
    expect(await admin.hget(store.ctx.keys.gauges(TENANT), 'parked')).toBe('0');
    expect((await runHash(store, run)).status).toBe('queued');
  });

  it('walks the runs oldest first by score while they leave it; prune takes out only those not queued or running when it runs', async () => {
    const store = makeStore();
    const runs = [await newRun(store), await newRun(store), await newRun(store)];
    const k = store.ctx.keys;
    await admin.zadd(k.inflightRuns(TENANT), 1, runs[0].runId, 2, runs[1].runId, 2, runs[2].runId);
    const pages: string[][] = [];
    for await (const page of store.inflight.walk(TENANT, 1)) {
      pages.push(page);
      await admin.zrem(k.inflightRuns(TENANT), page[0]); // leaves as it is walked
    }
    // Oldest first; the two of the same score in member order.
    expect(pages).toEqual([[runs[0].runId], ...[runs[1].runId, runs[2].runId].sort().map((id) => [id])]);

    await admin.zadd(k.inflightRuns(TENANT), 1, runs[0].runId, 2, runs[1].runId);
    const lease = await acquire(store, runs[0]);
    await parkAsking(store, lease, request(runs[0])); // out of the index; put back as if read earlier
    await admin.zadd(k.inflightRuns(TENANT), 1, runs[0].runId);
    await admin.hset(k.run(TENANT, runs[1].runId), 'status', 'waiting');
    expect(await store.inflight.prune(TENANT, [runs[0].runId, runs[1].runId, runs[2].runId])).toBe(2);
    expect(await admin.zrange(k.inflightRuns(TENANT), '0', '-1')).toEqual([]);
    // A run that is queued again when prune runs stays.
    await admin.zadd(k.inflightRuns(TENANT), 3, runs[2].runId);
    expect(await store.inflight.prune(TENANT, [runs[2].runId])).toBe(0);
    expect(await admin.zrange(k.inflightRuns(TENANT), '0', '-1')).toEqual([runs[2].runId]);
  });
});

describe('run replay', () => {
  it('skips stream entries of an older layout without shortening a page', async () => {
    const store = makeStore();
    const run = await newRun(store); // two events
    const k = store.ctx.keys;
    for (let i = 0; i < 3; i++) {
      // As an older release wrote them: the whole event as one JSON field `e`, the next three seqs.
      const seq = await admin.incr(k.seq(TENANT));
      await admin.xadd(k.tenantEvents(TENANT), `0-${seq}`, 'e', JSON.stringify({ seq }));
      const packed = Buffer.alloc(6);
      packed.writeUIntBE(seq, 0, 6);
      await admin.append(k.runEventSeqs(TENANT, run.runId), packed);
    }
    await acquire(store, run);
    const [created, queued] = await store.events.readTenant(TENANT, 0, 2);
    const running = await store.events.lastSeq(TENANT);
    expect((await store.events.readTenant(TENANT, 0, 3)).map((e) => e.seq)).toEqual([created.seq, queued.seq, running]);
    expect((await store.events.readRun(TENANT, run.runId, 0, 3)).map((e) => e.seq)).toEqual([created.seq, queued.seq, running]);
    expect((await store.events.readTenant(TENANT, queued.seq, 1)).map((e) => e.seq)).toEqual([running]);
    expect((await store.events.readRun(TENANT, run.runId, queued.seq, 1)).map((e) => e.seq)).toEqual([running]);
  });

  it("reads one run's events from the tenant stream through the run's seqs, paged by seq, skipping what the stream trimmed", async () => {
    const store = makeStore();
    const first = await newRun(store);
    const second = await newRun(store);
    const firstLease = await acquire(store, first);
    const secondLease = await acquire(store, second);
    for (let i = 0; i < 3; i++) {
      for (const lease of [firstLease, secondLease]) {
        expect(await store.runs.append(lease, null, [{ type: 'message', data: { text: `${lease.runId} ${i}` } }])).toMatchObject({ status: 'ok' });
      }
    }
    const all = await events(store);
    const ofFirst = all.filter((e) => e.runId === first.runId);
    expect(ofFirst.map((e) => e.type)).toEqual(['run.created', 'run.status', 'run.status', 'message', 'message', 'message']);

    expect(await store.events.readRun(TENANT, first.runId, 0, 1000)).toEqual(ofFirst);
    for (const [i, event] of ofFirst.entries()) {
      expect(await store.events.readRun(TENANT, first.runId, event.seq, 1000)).toEqual(ofFirst.slice(i + 1));
      expect(await store.events.readRun(TENANT, first.runId, event.seq - 1, 2)).toEqual(ofFirst.slice(i, i + 2));
    }
    expect(await store.events.readRun(TENANT, 'no-such-run', 0, 1000)).toEqual([]);

    // The tenant stream is capped: what it dropped is skipped, the rest still comes in order.
    const cut = ofFirst[3].seq;
    await admin.xtrim(store.ctx.keys.tenantEvents(TENANT), 'MINID', `0-${cut}`);
    expect(await store.events.readRun(TENANT, first.runId, 0, 2)).toEqual(ofFirst.slice(3, 5));
    expect(await store.events.readRun(TENANT, first.runId, 0, 1000)).toEqual(ofFirst.slice(3));
    // Trimmed as an older release did (no record of the newest trimmed): the oldest entry tells.
    expect(await store.events.replayRun(TENANT, first.runId, 0, 1000)).toEqual({ events: ofFirst.slice(3), truncated: true });
    expect(await store.events.replayRun(TENANT, first.runId, ofFirst[1].seq, 1000)).toEqual({ events: ofFirst.slice(3), truncated: true });
    expect(await store.events.replayRun(TENANT, first.runId, ofFirst[2].seq, 1000)).toEqual({ events: ofFirst.slice(3), truncated: false });
  });

  it('trims the tenant stream itself, keeping the newest trimmed seq, and a replay from before it says events are missing', async () => {
    const store = makeStore({ eventsMaxLen: 100 });
    const runs = [await newRun(store), await newRun(store)];
    const leases = [await acquire(store, runs[0]), await acquire(store, runs[1])];
    const k = store.ctx.keys;
    expect(await store.events.replayTenant(TENANT, 0, 1000)).toMatchObject({ truncated: false });
    for (let i = 0; i < 110; i++) {
      for (const lease of leases) {
        await store.runs.append(lease, null, [{ type: 'message', data: { text: `${i}` } }]);
      }
    }
    const length = await admin.xlen(k.tenantEvents(TENANT));
    expect(length).toBeGreaterThanOrEqual(100);
    expect(length).toBeLessThan(200);
    const seqsOf = async (runId: string): Promise<number[]> => {
      const packed = await admin.getBuffer(k.runEventSeqs(TENANT, runId));
      return Array.from({ length: packed!.length / 6 }, (_, i) => packed!.readUIntBE(i * 6, 6));
    };
    const [ofFirst, ofSecond] = [await seqsOf(runs[0].runId), await seqsOf(runs[1].runId)];
    const all = [...ofFirst, ...ofSecond].sort((a, b) => a - b);
    expect(all).toHaveLength(2 * 113);
    const [[oldestId]] = await admin.xrange(k.tenantEvents(TENANT), '-', '+', 'COUNT', 1);
    const oldest = Number(oldestId.slice(2));
    const newestTrimmed = all[all.indexOf(oldest) - 1];
    expect(Number(await admin.get(k.trimmedEvents(TENANT)))).toBe(newestTrimmed);

    const kept = await store.events.readTenant(TENANT, 0, 1000);
    expect(kept[0].seq).toBe(oldest);
    expect(await store.events.replayTenant(TENANT, 0, 1000)).toEqual({ events: kept, truncated: true });
    expect(await store.events.replayTenant(TENANT, all[all.indexOf(newestTrimmed) - 1], 1000)).toEqual({ events: kept, truncated: true });
    expect(await store.events.replayTenant(TENANT, newestTrimmed, 1000)).toEqual({ events: kept, truncated: false });
    expect(await store.events.replayTenant(TENANT, oldest, 1000)).toEqual({ events: kept.slice(1), truncated: false });

    // A run's replay is truncated only by its own events trimmed.
    const firstKept = kept.filter((e) => e.runId === runs[0].runId);
    const firstTrimmed = ofFirst.filter((seq) => seq < oldest);
    expect(await store.events.replayRun(TENANT, runs[0].runId, 0, 1000)).toEqual({ events: firstKept, truncated: true });
    expect(await store.events.replayRun(TENANT, runs[0].runId, firstTrimmed.at(-2)!, 1000)).toEqual({ events: firstKept, truncated: true });
    expect(await store.events.replayRun(TENANT, runs[0].runId, firstTrimmed.at(-1)!, 1000)).toEqual({ events: firstKept, truncated: false });
  });

  it("keeps a long run's newest seqs, as many as the stream keeps", async () => {
    const store = makeStore({ eventsMaxLen: 100 });
    const run = await newRun(store);
    const lease = await acquire(store, run);
    for (let i = 0; i < 300; i++) {
      await store.runs.append(lease, null, [{ type: 'message', data: { text: `m${i}` } }]);
    }
    const kept = (await admin.strlen(store.ctx.keys.runEventSeqs(TENANT, run.runId))) / 6;
    expect(kept).toBeGreaterThanOrEqual(100);
    expect(kept).toBeLessThanOrEqual(200);
    const replay = await store.events.readRun(TENANT, run.runId, 0, 1000);
    const stream = await store.events.readTenant(TENANT, 0, 1000);
    // What both still hold, in order: the newest events of the run, the last one included.
    expect(replay.length).toBeGreaterThanOrEqual(100);
    expect(replay).toEqual(stream.slice(-replay.length));
    expect(replay.at(-1)).toMatchObject({ type: 'message', data: { text: 'm299' } });

    // 303 events: the stream was last trimmed at its 300th (it holds the 201st on), the seqs at the
    // 302nd (they hold the 203rd on): the 202nd is in the stream but no longer among the run's seqs.
    expect(stream).toHaveLength(103);
    const cut = Number(await admin.hget(store.ctx.keys.run(TENANT, run.runId), 'seqsCut'));
    expect(cut).toBe(stream[1].seq);
    expect(await store.events.replayRun(TENANT, run.runId, 0, 1000)).toEqual({ events: stream.slice(2), truncated: true });
    expect(await store.events.replayRun(TENANT, run.runId, stream[0].seq, 1000)).toEqual({ events: stream.slice(2), truncated: true });
    expect(await store.events.replayRun(TENANT, run.runId, cut, 1000)).toEqual({ events: stream.slice(2), truncated: false });
  });
});

describe('workspace effects', () => {
  it('writes a path in its result as JSON.stringify does: slashes unescaped, backslashes escaped', async () => {
    const store = makeStore();
    const run = await newRun(store);
    const workspace = new RedisWorkspace(store.ctx, await acquire(store, run), 100);
    const written = await workspace.write('fx-1', 'notes/a\\b/c.md', 'x');
    expect(written.status === 'applied' ? written.result : '').toBe(`{"ok":true,"path":${JSON.stringify('notes/a\\b/c.md')},"bytes":1,"created":true}`);
    const deleted = await workspace.delete('fx-2', 'notes/a\\b/c.md');
    expect(deleted.status === 'applied' ? deleted.result : '').toBe(`{"ok":true,"path":${JSON.stringify('notes/a\\b/c.md')},"deleted":true}`);
  });

  it('applies an effect id once, counts bytes, and rejects a write over the total limit without writing', async () => {
    const store = makeStore();
    const run = await newRun(store);
    const lease = await acquire(store, run);
    const workspace = new RedisWorkspace(store.ctx, lease, 100);
    const wsKey = store.ctx.keys.workspace(TENANT, run.runId);
    const bytes = async () => Number((await runHash(store, run)).wsBytes ?? 0);

    const first = await workspace.write('fx-1', 'a.md', 'hello');
    expect(first).toEqual({ status: 'applied', result: expect.any(String) });
    expect(JSON.parse(first.status === 'applied' ? first.result : '{}')).toEqual({ ok: true, path: 'a.md', bytes: 5, created: true });
    // The same effect id again (a retried step): replayed, the first result, nothing written.
    const replay = await workspace.write('fx-1', 'a.md', 'something else entirely');
    expect(replay).toEqual({ status: 'replayed', result: first.status === 'applied' ? first.result : '' });
    expect(await workspace.read('a.md')).toBe('hello');
    expect(await bytes()).toBe(5);

    // Overwrite: the old size is given back. Sizes are bytes, not characters.
    expect(await workspace.write('fx-2', 'a.md', 'héé')).toMatchObject({ status: 'applied' });
    expect(await bytes()).toBe(5);
    expect(await workspace.write('fx-3', 'b.md', 'x'.repeat(95))).toMatchObject({ status: 'applied' });
    expect(await bytes()).toBe(100);
    expect(await workspace.list()).toEqual([
      { path: 'a.md', bytes: 5 },
      { path: 'b.md', bytes: 95 },
    ]);

    // One byte over the limit: rejected, nothing written, nothing recorded.
    const full = await workspace.write('fx-4', 'c.md', 'y');
    expect(full).toEqual({ status: 'rejected', error: expect.stringContaining('workspace full') });
    expect(await store.ctx.redis.hexists(wsKey, 'c.md')).toBe(0);
    expect(await store.ctx.redis.hexists(store.ctx.keys.effects(TENANT, run.runId), 'fx-4')).toBe(0);
    expect(await bytes()).toBe(100);

    // Delete gives the bytes back; replaying the delete changes nothing.
    const deleted = await workspace.delete('fx-5', 'b.md');
    expect(deleted).toMatchObject({ status: 'applied' });
    expect(JSON.parse(deleted.status === 'applied' ? deleted.result : '{}')).toEqual({ ok: true, path: 'b.md', deleted: true });
    expect(await workspace.delete('fx-5', 'b.md')).toMatchObject({ status: 'replayed' });
    expect(await bytes()).toBe(5);
    expect(await workspace.list()).toEqual([{ path: 'a.md', bytes: 5 }]);
    expect(await store.ctx.redis.hlen(store.ctx.keys.effects(TENANT, run.runId))).toBe(4);
    // Workspace effects are not run events.
    expect((await events(store)).map((e) => e.type)).toEqual(['run.created', 'run.status', 'run.status']);
  });
});

describe('cancel', () => {
  it('cancelling a waiting run cancels its open interaction in the same step, with one cancelled answer entry', async () => {
    const store = makeStore();
    const { run, interaction } = await waitingRun(store);
    const seq = await store.events.lastSeq(TENANT);
    const logLength = (await store.runs.readLog(TENANT, run.runId)).length;

    expect(await store.runs.cancel(run, BOB, { id: interaction.id, waitReason: 'question' })).toEqual({ status: 'cancelled', parentWake: null });

    const cancelled = await store.runs.get(TENANT, run.runId);
    expect(cancelled).toMatchObject({ status: 'cancelled', endReason: 'cancelled' });
    expect(cancelled?.pendingInteractionId).toBeUndefined();
    expect(cancelled?.waitReason).toBeUndefined();
    expect(await store.interactions.get(TENANT, interaction.id)).toMatchObject({ status: 'cancelled', resolvedBy: BOB, resolvedAt: expect.any(String) });
    expect(await store.interactions.listOpen(TENANT, { keep: () => true, limit: 100 })).toEqual({ interactions: [], next: null });

    const log = await store.runs.readLog(TENANT, run.runId);
    expect(log).toHaveLength(logLength + 1);
    expect(answers(log)).toEqual([{ type: 'answer', interactionId: interaction.id, outcome: 'cancelled', by: BOB, at: expect.any(String) }]);
    const cancelEvents = await events(store, TENANT, seq);
    expect(cancelEvents.map((e) => [e.type, e.data])).toEqual([
      ['interaction.resolved', { interactionId: interaction.id, outcome: 'cancelled', by: BOB, at: expect.any(String) }],
      ['run.status', { status: 'cancelled' }],
      ['run.cancelled', { reason: 'cancelled', by: BOB }],
    ]);
    const ttl = await store.ctx.redis.ttl(store.ctx.keys.interaction(TENANT, interaction.id));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(RETENTION_SECS);
    expect(await store.ctx.redis.ttl(store.ctx.keys.run(TENANT, run.runId))).toBeGreaterThan(0);

    // Cancelling again changes nothing.
    expect(await store.runs.cancel(run, ALICE, { id: interaction.id, waitReason: 'question' })).toEqual({ status: 'already', runStatus: 'cancelled' });
    expect(await store.events.lastSeq(TENANT)).toBe(cancelEvents[2].seq);
  });

  it('a cancel that names the wrong open interaction is stale and changes nothing', async () => {
    const store = makeStore();
    const { run, interaction } = await waitingRun(store);
    const seq = await store.events.lastSeq(TENANT);
    expect(await store.runs.cancel(run, BOB, { id: randomUUID(), waitReason: 'question' })).toEqual({ status: 'stale' });
    expect(await store.runs.cancel(run, BOB, null)).toEqual({ status: 'stale' });
    expect((await store.runs.get(TENANT, run.runId))?.status).toBe('waiting');
    expect((await store.interactions.get(TENANT, interaction.id))?.status).toBe('open');
    expect(await store.events.lastSeq(TENANT)).toBe(seq);
  });

  it('cancelling a run a worker holds only flags it; the worker sees it at its next append or park', async () => {
    const store = makeStore();
    const run = await newRun(store);
    const lease = await acquire(store, run);
    const seq = await store.events.lastSeq(TENANT);

    expect(await store.runs.cancel(run, BOB, null)).toEqual({ status: 'requested' });
    expect((await store.runs.get(TENANT, run.runId))?.status).toBe('running');
    // The flag is announced, once: a second stop asked changes nothing seen, and the first requester stays.
    expect(await store.runs.cancel(run, ALICE, null)).toEqual({ status: 'requested' });
    expect((await events(store, TENANT, seq)).map((e) => [e.type, e.data])).toEqual([['run.stop_requested', { by: BOB }]]);
    expect(await store.runs.cancelRequester(TENANT, run.runId)).toEqual(BOB);

    const entry: LogEntry = { type: 'assistant', text: 'more', toolCalls: [], at: new Date().toISOString() };
    expect(await store.runs.append(lease, entry)).toEqual({ status: 'cancelled' });
    expect(await store.runs.park(lease, 'question', randomUUID())).toEqual({ status: 'cancelled' });
    expect(await store.runs.readLog(TENANT, run.runId)).toHaveLength(1);

    // Ending instead (the loop reached an end after its last append) gives way to the stop.
    expect(await store.runs.end(lease, { status: 'finished', reason: 'finish' })).toEqual({ status: 'stop' });
    expect((await store.runs.get(TENANT, run.runId))?.status).toBe('running');

    // The holder ends it.
    expect(await store.runs.cancel(run, BOB, null, lease.token)).toEqual({ status: 'cancelled', parentWake: null });
    expect((await store.runs.get(TENANT, run.runId))?.status).toBe('cancelled');
  });
});

describe('end-run', () => {
  it('sets the retention period on every key of the run, and only on those', async () => {
    const store = makeStore();
    const run = await newRun(store);
    const interaction = await parkAsking(store, await acquire(store, run), request(run));
    await store.interactions.resolve({ interaction, outcome: 'answered', answer: RETREAT, by: ALICE });
    const lease = await acquire(store, run);
    await admin.rpush(store.ctx.keys.runInbox(TENANT, run.runId), 'child'); // a wake the worker has not read yet
    expect(await new RedisWorkspace(store.ctx, lease, 1024).write('fx-1', 'plan.md', '# Plan')).toMatchObject({ status: 'applied' });

    expect(await store.runs.end(lease, { status: 'finished', reason: 'finish', summary: 'done' })).toEqual({ status: 'ended', parentWake: null });
    expect(await store.runs.get(TENANT, run.runId)).toMatchObject({ status: 'finished', endReason: 'finish', summary: 'done' });

    const k = store.ctx.keys;
    const runKeys = await scanKeys(`${k.run(TENANT, run.runId)}*`);
    expect(runKeys).toEqual(
      [
        k.run(TENANT, run.runId),
        k.runLog(TENANT, run.runId),
        k.runInbox(TENANT, run.runId),
        k.runEventSeqs(TENANT, run.runId),
        k.workspace(TENANT, run.runId),
        k.effects(TENANT, run.runId),
      ].sort(),
    );
    for (const key of runKeys) {
      const ttl = await admin.ttl(key);
      expect([key, ttl > 0 && ttl <= RETENTION_SECS]).toEqual([key, true]);
    }
    // Tenant-wide keys live on.
    for (const key of [k.seq(TENANT), k.tenantEvents(TENANT), k.runIndex(TENANT)]) {
      expect([key, await admin.ttl(key)]).toEqual([key, -1]);
    }

    expect(await store.runs.end(lease, { status: 'failed', reason: 'internal_error', error: 'again' })).toEqual({ status: 'already' });
    expect((await store.runs.get(TENANT, run.runId))?.status).toBe('finished');
  });
});

const APPROVAL: Prompt = {
  kind: 'tool_approval',
  prompt: 'Run shell command: touch a',
  tool: 'shell',
  input: { command: 'touch a' },
  telling: { label: 'command', value: 'touch a' },
  stage: 'main',
  grant: { reusable: true, keys: ['shell:cmd:touch'], description: '`touch` (any arguments)' },
};
const ALLOW_RUN: Answer = { kind: 'tool_approval', decision: 'allow_run', input: { command: 'touch a' }, edited: false, grants: ['run|shell:cmd:touch'], argsDigest: 'd' };
const ADA: Actor = { kind: 'user', subject: 'ada', role: 'admin' };

/** A run parked on an open approval whose deadline is `deadlineInSecs` away (0 = none). */
async function approvalRun(store: ParleyStore, deadlineInSecs = 3600): Promise<{ run: NewRun; lease: Lease; interaction: Interaction }> {
  const run = await newRun(store);
  const lease = await acquire(store, run);
  const interaction = await parkAsking(store, lease, { ...request(run), waitReason: 'approval', prompt: APPROVAL, timeoutSecs: deadlineInSecs });
  return { run, lease, interaction };
}

describe('approvals', () => {
  it('the approval index orders by deadline (none last) and loses an entry when it is resolved or its run stopped', async () => {
    const store = makeStore();
    const late = await approvalRun(store, 3600);
    const never = await approvalRun(store, 0);
    const soon = await approvalRun(store, 60);
    const question = await waitingRun(store);
    const ids = async () => (await store.interactions.listOpenApprovals(TENANT, { keep: () => true, limit: 10 })).interactions.map((i) => i.id);
    expect(await ids()).toEqual([soon.interaction.id, late.interaction.id, never.interaction.id]);
    expect(await ids()).not.toContain(question.interaction.id);
    expect((await store.interactions.listOpenApprovals(TENANT, { keep: (i) => i.id === never.interaction.id, limit: 1 })).interactions).toHaveLength(1);

    await store.interactions.resolve({ interaction: soon.interaction, outcome: 'answered', answer: ALLOW_RUN, by: ALICE });
    expect(await store.runs.cancel(late.run, BOB, { id: late.interaction.id, waitReason: 'approval' })).toEqual({ status: 'cancelled', parentWake: null });
    expect(await ids()).toEqual([never.interaction.id]);
  });

  it('a scoped approval writes its grants in the same step; ending or stopping the run deletes them', async () => {
    const store = makeStore();
    const { run, interaction } = await approvalRun(store);
    expect((await store.interactions.resolve({ interaction, outcome: 'answered', answer: ALLOW_RUN, by: ALICE })).status).toBe('resolved');
    expect(await admin.smembers(store.ctx.keys.runGrants(TENANT, run.runId))).toEqual(['run|shell:cmd:touch']);
    expect(await store.runs.grantedAmong(TENANT, run.runId, ['run|shell:cmd:touch', 'run|shell:cmd:rm', 'stage|main|shell:cmd:touch'])).toEqual(
      new Set(['run|shell:cmd:touch']),
    );
    const lease = await acquire(store, run);
    expect(await store.runs.end(lease, { status: 'finished', reason: 'finish' })).toEqual({ status: 'ended', parentWake: null });
    expect(await admin.exists(store.ctx.keys.runGrants(TENANT, run.runId))).toBe(0);

    const stopped = await approvalRun(store);
    await store.interactions.resolve({ interaction: stopped.interaction, outcome: 'answered', answer: ALLOW_RUN, by: ALICE });
    const again = await acquire(store, stopped.run);
    const second = await parkAsking(store, again, { ...request(stopped.run), waitReason: 'approval', prompt: APPROVAL });
    expect(await store.runs.cancel(stopped.run, BOB, { id: second.id, waitReason: 'approval' })).toEqual({ status: 'cancelled', parentWake: null });
    expect(await admin.exists(store.ctx.keys.runGrants(TENANT, stopped.run.runId))).toBe(0);

    // An approval still open when its run failed (an unfenced end of a run nobody advances: queued,
    // its job gone) writes no grant when answered late.
    const failed = await approvalRun(store);
    await admin.hset(store.ctx.keys.run(TENANT, failed.run.runId), 'status', 'queued');
    expect(await store.runs.end({ ...failed.lease, token: '' }, { status: 'failed', reason: 'internal_error', error: 'x' }, false)).toEqual({ status: 'ended', parentWake: null });
    expect((await store.interactions.resolve({ interaction: failed.interaction, outcome: 'answered', answer: ALLOW_RUN, by: ALICE })).status).toBe('resolved');
    expect(await admin.exists(store.ctx.keys.runGrants(TENANT, failed.run.runId))).toBe(0);
  });

  it('an unfenced end (a job out of attempts) leaves a run that is parked or held under a live lease alone', async () => {
    const store = makeStore();
    const ending = { status: 'failed' as const, reason: 'internal_error' as const, error: 'x' };
    const run = await newRun(store);
    const lease = await acquire(store, run);
    expect(await store.runs.end({ ...lease, token: '' }, ending, false)).toEqual({ status: 'lost' });
    await parkAsking(store, lease, { ...request(run), waitReason: 'approval', prompt: APPROVAL });
    expect(await store.runs.end({ ...lease, token: '' }, ending, false)).toEqual({ status: 'lost' });
    expect((await store.runs.get(TENANT, run.runId))?.status).toBe('waiting');
  });

  it("an unfenced end for a job's wake leaves a run woken since alone (a later job has it); at that wake it ends it", async () => {
    const store = makeStore();
    const ending = { status: 'failed' as const, reason: 'internal_error' as const, error: 'x' };
    const run = await newRun(store);
    // Job 0 parks the run on its last attempt and then fails; the question is answered before its failure is handled.
    const interaction = await parkAsking(store, await acquire(store, run), request(run));
    expect(await store.interactions.resolve({ interaction, outcome: 'answered', answer: RETREAT, by: ALICE })).toMatchObject({ status: 'resolved', wake: 1 });
    const target = { tenant: TENANT, runId: run.runId, owner: run.owner, token: '' };
    expect(await store.runs.end(target, ending, false, undefined, 0)).toEqual({ status: 'lost' });
    expect((await store.runs.get(TENANT, run.runId))?.status).toBe('queued');
    // Job 1, the latest, giving up ends it.
    expect(await store.runs.end(target, ending, false, undefined, 1)).toMatchObject({ status: 'ended' });
    expect((await store.runs.get(TENANT, run.runId))?.status).toBe('failed');
  });

  it('a live claim lets only its holder resolve; deadlines ignore it; an expired claim binds nobody', async () => {
    const store = makeStore();
    const { interaction } = await approvalRun(store);
    expect(await store.interactions.claim(interaction, { ...ADA, subject: 'ada' }, Date.now() + 60_000)).toMatchObject({ status: 'claimed' });
    expect(await store.interactions.claim(interaction, { ...BOB, subject: 'bob' }, Date.now() + 60_000)).toMatchObject({
      status: 'held',
      claim: { subject: 'ada' },
    });
    expect(await store.interactions.claim(interaction, { ...BOB, subject: 'bob' }, null)).toMatchObject({ status: 'held' });
    expect(await store.interactions.resolve({ interaction, outcome: 'answered', answer: ALLOW_RUN, by: BOB })).toMatchObject({
      status: 'claimed',
      claim: { subject: 'ada' },
    });
    expect((await store.interactions.get(TENANT, interaction.id))?.status).toBe('open');
    expect((await store.interactions.resolve({ interaction, outcome: 'expired', by: { kind: 'deadline' } })).status).toBe('resolved');
    expect(await store.interactions.claim(interaction, { ...ADA, subject: 'ada' }, null)).toEqual({ status: 'closed', interactionStatus: 'expired' });

    const other = await approvalRun(store);
    expect(await store.interactions.claim(other.interaction, { ...ADA, subject: 'ada' }, Date.now() + 30)).toMatchObject({ status: 'claimed' });
    await waitFor(async () => (await store.interactions.get(TENANT, other.interaction.id))?.claim === undefined, { message: 'the claim to expire' });
    expect(await store.interactions.claim(other.interaction, { ...ADA, subject: 'ada' }, null)).toEqual({ status: 'not_claimed' });
    expect((await store.interactions.resolve({ interaction: other.interaction, outcome: 'answered', answer: ALLOW_RUN, by: BOB })).status).toBe('resolved');
    const claimed = (await events(store)).filter((e) => e.type === 'interaction.claimed');
    expect(claimed).toHaveLength(2);

    // The claimant's answer, given a copy read while the claim lived: the resolution it gets back holds no claim.
    const third = await approvalRun(store);
    await store.interactions.claim(third.interaction, { ...ADA, subject: 'ada' }, Date.now() + 60_000);
    const read = (await store.interactions.get(TENANT, third.interaction.id))!;
    expect(read.claim).toMatchObject({ subject: 'ada' });
    const resolved = await store.interactions.resolve({ interaction: read, outcome: 'answered', answer: ALLOW_RUN, by: { ...ADA, subject: 'ada' } });
    expect(resolved).toMatchObject({ status: 'resolved', interaction: { status: 'answered' } });
    expect(resolved.status === 'resolved' && 'claim' in resolved.interaction).toBe(false);
  });
});

describe('workspace commit (shell write-back)', () => {
  it('applies writes and deletes together once per effect id, rejects over the limit without changing anything, and is fenced', async () => {
    const store = makeStore();
    const run = await newRun(store);
    const lease = await acquire(store, run);
    const workspace = new RedisWorkspace(store.ctx, lease, 100);
    expect(await workspace.write('fx-0', 'old.txt', 'old')).toMatchObject({ status: 'applied' });

    const changes = { writes: [{ path: 'a.txt', content: 'aaaa' }, { path: 'b/c.txt', content: 'cc' }], deletes: ['old.txt'] };
    expect(await workspace.commit('fx-1', changes, '{"ok":true,"n":1}')).toEqual({ status: 'applied', result: '{"ok":true,"n":1}' });
    expect(await workspace.commit('fx-1', { writes: [{ path: 'x', content: 'y' }], deletes: [] }, '{"n":2}')).toEqual({ status: 'replayed', result: '{"ok":true,"n":1}' });
    expect(await workspace.recorded('fx-1')).toBe('{"ok":true,"n":1}');
    expect(Object.fromEntries(await workspace.snapshot())).toEqual({ 'a.txt': 'aaaa', 'b/c.txt': 'cc' });
    expect((await runHash(store, run)).wsBytes).toBe('6');

    expect(await workspace.commit('fx-2', { writes: [{ path: 'big', content: 'x'.repeat(95) }], deletes: [] }, '{}')).toMatchObject({ status: 'rejected' });
    expect(await workspace.recorded('fx-2')).toBeNull();
    expect([...(await workspace.snapshot()).keys()].sort()).toEqual(['a.txt', 'b/c.txt']);

    const stale = new RedisWorkspace(store.ctx, { ...lease, token: 'not-the-lease' }, 100);
    await expect(stale.commit('fx-3', { writes: [{ path: 'z', content: 'z' }], deletes: [] }, '{}')).rejects.toBeInstanceOf(LeaseLostError);
    expect((await workspace.snapshot()).has('z')).toBe(false);

    // Over a limit lowered since (6 bytes held, 4 allowed): what does not grow the workspace past it
    // still goes through (a batch of no changes records its result), what does is refused.
    const lowered = new RedisWorkspace(store.ctx, lease, 4);
    expect(await lowered.commit('fx-4', { writes: [], deletes: [] }, '{"n":4}')).toEqual({ status: 'applied', result: '{"n":4}' });
    expect(await lowered.commit('fx-5', { writes: [{ path: 'a.txt', content: 'a' }], deletes: [] }, '{"n":5}')).toMatchObject({ status: 'applied' });
    expect(await lowered.commit('fx-6', { writes: [{ path: 'b/c.txt', content: 'cccc' }], deletes: [] }, '{}')).toMatchObject({ status: 'rejected' });
    expect(await lowered.write('fx-7', 'b/c.txt', 'c')).toMatchObject({ status: 'applied' });
    expect(await lowered.write('fx-8', 'a.txt', 'aaaa')).toMatchObject({ status: 'rejected' });
    expect((await runHash(store, run)).wsBytes).toBe('2');
  });
});

describe('sub-agents', () => {
  it('a run that ends with sub-agents is filed for its stop cascade in the same step, until the cascade is done; one without is not', async () => {
    const store = makeStore();
    const cascade = (runId: string) => store.ctx.redis.zscore(store.ctx.keys.cascades(TENANT), runId);
    const parent = await newRun(store);
    const lease = await acquire(store, parent);
    const child: NewRun = { ...parent, runId: randomUUID(), trigger: 'delegate', unattended: true, parentRunId: parent.runId, parentLeaseToken: lease.token };
    expect(await store.runs.create(child)).toEqual({ created: true, wake: 0 });

    expect(await store.runs.end(lease, { status: 'finished', reason: 'finish' }, true)).toMatchObject({ status: 'ended' });
    expect(Number(await cascade(parent.runId))).toBeGreaterThan(0);
    await store.cascades.postpone(TENANT, parent.runId, 42);
    expect(await store.cascades.due(TENANT, 100, 10)).toEqual([parent.runId]);
    await store.cascades.done(TENANT, parent.runId);
    expect(await cascade(parent.runId)).toBeNull();

    const childLease = await acquire(store, child);
    expect(await store.runs.end(childLease, { status: 'finished', reason: 'finish' }, true, parent.runId)).toMatchObject({ status: 'ended' });
    expect(await cascade(child.runId)).toBeNull();
  });

  it("only the parent's current advancer starts a child; a child's end writes its result into the parent's log and wakes it, once", async () => {
    const store = makeStore();
    const parent = await newRun(store);
    const lease = await acquire(store, parent);
    const child: NewRun = { ...parent, runId: randomUUID(), trigger: 'delegate', unattended: true, parentRunId: parent.runId, parentLeaseToken: 'stale' };
    await expect(store.runs.create(child)).rejects.toBeInstanceOf(LeaseLostError);
    expect(await store.runs.get(TENANT, child.runId)).toBeNull();

    expect(await store.runs.create({ ...child, parentLeaseToken: lease.token })).toEqual({ created: true, wake: 0 });
    expect(await store.runs.children(TENANT, parent.runId)).toEqual([child.runId]);
    expect(await store.runs.get(TENANT, child.runId)).toMatchObject({ unattended: true, parentRunId: parent.runId, trigger: 'delegate' });
    expect(await store.runs.park(lease, 'child', child.runId)).toEqual({ status: 'parked', deadlineTimer: null });

    const childLease = await acquire(store, child);
    const ended = await store.runs.end(childLease, { status: 'finished', reason: 'needs_input', summary: 'the budget' }, true, parent.runId);
    expect(ended).toEqual({ status: 'ended', parentWake: { runId: parent.runId, wake: 1 } });
    expect(await store.runs.end(childLease, { status: 'finished', reason: 'finish' }, true, parent.runId)).toEqual({ status: 'already' });
    const results = (await store.runs.readLog(TENANT, parent.runId)).filter((e) => e.type === 'child_result');
    expect(results).toEqual([expect.objectContaining({ childRunId: child.runId, reason: 'needs_input', text: 'the budget' })]);
    expect(await store.runs.queuedWake(TENANT, parent.runId)).toBe(1);
    const parentEvents = (await events(store)).filter((e) => e.runId === parent.runId).map((e) => e.type);
    expect(parentEvents.slice(-2)).toEqual(['child.ended', 'run.status']);
  });

  it('messages wait in order, move into the log once, and are refused once the run has ended', async () => {
    const store = makeStore();
    const run = await newRun(store);
    const target = { tenant: run.tenant, id: run.runId, owner: run.owner };
    const message = (n: number) => ({ messageId: `m${n}`, text: `note ${n}`, by: ALICE, at: new Date().toISOString() });
    expect(await store.messages.post(target, message(1))).toEqual({ status: 'accepted', pending: 1 });
    expect(await store.messages.post(target, message(2))).toEqual({ status: 'accepted', pending: 2 });
    // The lease step counts them, so the worker knows whether to take any.
    expect(await store.runs.acquire(TENANT, run.runId, run.owner, 'token-m')).toMatchObject({ status: 'acquired', pendingMessages: 2 });
    const lease = { tenant: run.tenant, runId: run.runId, owner: run.owner, token: 'token-m' };
    expect(await store.messages.take(lease)).toEqual({ status: 'ok', messageIds: ['m1', 'm2'] });
    expect(await store.messages.take(lease)).toEqual({ status: 'ok', messageIds: [] });
    expect((await store.runs.readLog(TENANT, run.runId)).filter((e) => e.type === 'user_message').map((e) => e.type === 'user_message' && e.text)).toEqual([
      'note 1',
      'note 2',
    ]);
    expect(await store.messages.take({ ...lease, token: 'stale' })).toEqual({ status: 'lost' });
    await store.runs.end(lease, { status: 'finished', reason: 'finish' });
    expect(await store.messages.post(target, message(3))).toEqual({ status: 'ended', runStatus: 'finished' });
    expect(await store.messages.post({ ...target, id: 'nope' }, message(4))).toEqual({ status: 'missing' });
  });
});

describe("an answer's job sent behind its resolve (InteractionResolver with the parked wake)", () => {
  /** A store with its queues, the runs queue also on the store's own connection, as a gateway has them. */
  /** `queuesDown`: the queues' own connection (every add but the one behind the scripts) cannot reach Redis. */
  function withQueues(options: { queuesDown?: boolean } = {}): { store: ParleyStore; queues: ParleyQueues; resolver: InteractionResolver; jobIds: (run: NewRun) => Promise<string[]> } {
    const store = makeStore();
    const queueConnection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    // A port nothing listens on, no retries, no offline queue: its adds fail at once.
    const down = new Redis({ port: 1, lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
    down.on('error', () => undefined);
    clients.push(queueConnection);
    const queues = new ParleyQueues(options.queuesDown ? down : queueConnection, store.ctx.keys.bullPrefix(), store.ctx.redis as Redis);
    const reader = new ParleyQueues(queueConnection, store.ctx.keys.bullPrefix());
    closers.push(() => queues.close(), () => reader.close(), () => Promise.resolve(down.disconnect()));
    const jobIds = async (run: NewRun) =>
      (await reader.runs.getJobs(['waiting', 'active', 'completed', 'delayed']))
        .filter((job) => job.data.runId === run.runId)
        .map((job) => job.id ?? '')
        .sort();
    return { store, queues, resolver: new InteractionResolver(store, queues), jobIds };
  }

  /** What a worker's first step does with a job of that wake (acquire-lease), as far as the run's counter goes. */
  async function takeJob(store: ParleyStore, run: NewRun, wake: number): Promise<AcquireResult> {
    return store.runs.acquire(run.tenant, run.runId, '', randomUUID(), { jobWake: wake });
  }

  const counter = async (store: ParleyStore, run: NewRun) => Number((await runHash(store, run)).wake ?? 0);
  const jobId = (run: NewRun, wake: number) => `run.${run.tenant}.${run.runId}.${wake}`;

  it('park publishes the run wake counter with interaction.opened, and only there: the stored event has none', async () => {
    const store = makeStore();
    const published = await publishedMessages(store);
    const { run, interaction } = await waitingRun(store);
    await store.interactions.resolve({ interaction, outcome: 'answered', answer: RETREAT, by: ALICE });
    const again = await acquire(store, run);
    const second = await parkAsking(store, again, request(run));

    const opened = () => published.flat().filter((event) => event.type === 'interaction.opened');
    await waitFor(() => opened().length === 2);
    expect(opened().map((event) => event.wake)).toEqual([0, 1]);
    expect(published.flat().filter((event) => event.type !== 'interaction.opened' && 'wake' in event)).toEqual([]);
    const stored = (await events(store)).filter((event) => event.type === 'interaction.opened');
    expect(stored.map((event) => (event.data).interaction.id)).toEqual([interaction.id, second.id]);
    expect(stored.every((event) => !('wake' in event))).toBe(true);
  });

  it('with the wake it parked at, the job goes out numbered one past it, as the resolve numbers the wake, behind the resolve', async () => {
    // Only the add behind the resolve can reach Redis: the job is that one.
    const { store, resolver, jobIds } = withQueues({ queuesDown: true });
    const { run, interaction } = await waitingRun(store);
    const result = await resolver.resolve({ interaction, outcome: 'answered', answer: RETREAT, by: ALICE }, 0);
    expect(result).toMatchObject({ status: 'resolved', wake: 1 });
    expect(await jobIds(run)).toEqual([jobId(run, 1)]);
  });

  it('with a stale parked wake (the run was woken since), the job of the wake the resolve gave is enqueued too', async () => {
    const { store, resolver, jobIds } = withQueues();
    const { run, interaction } = await waitingRun(store);
    // Another wake since the question was published (its job done), and the run parked again on it.
    await admin.hset(store.ctx.keys.run(TENANT, run.runId), 'wake', 1);

    const result = await resolver.resolve({ interaction, outcome: 'answered', answer: RETREAT, by: ALICE }, 0);
    expect(result).toMatchObject({ status: 'resolved', wake: 2 });
    expect(await jobIds(run)).toEqual([jobId(run, 1), jobId(run, 2)]);
  });

  it('a refused answer leaves an early job; taking it raises the counter, so the next wake gets a job of its own', async () => {
    const { store, resolver, jobIds } = withQueues();
    const { run, interaction } = await approvalRun(store);
    expect(await store.interactions.claim(interaction, { ...ADA, subject: 'ada' }, Date.now() + 60_000)).toMatchObject({ status: 'claimed' });
    expect(await resolver.resolve({ interaction, outcome: 'answered', answer: ALLOW_RUN, by: BOB }, 0)).toMatchObject({ status: 'claimed' });
    expect(await jobIds(run)).toEqual([jobId(run, 1)]);
    expect(await takeJob(store, run, 1)).toEqual({ status: 'idle', runStatus: 'waiting' });
    expect(await counter(store, run)).toBe(1);

    const answered = await resolver.resolve({ interaction, outcome: 'answered', answer: ALLOW_RUN, by: ADA }, 0);
    expect(answered).toMatchObject({ status: 'resolved', wake: 2 });
    expect(await jobIds(run)).toEqual([jobId(run, 1), jobId(run, 2)]);
    expect(await takeJob(store, run, 2)).toMatchObject({ status: 'acquired' });
  });

  it('an early job taken before its resolve ran (a resend put it first) does not swallow the wake', async () => {
    const { store, queues, resolver, jobIds } = withQueues();
    const { run, interaction } = await waitingRun(store);
    await queues.enqueueRunBehindScripts({ tenant: TENANT, runId: run.runId, wake: 1 });
    expect(await takeJob(store, run, 1)).toEqual({ status: 'idle', runStatus: 'waiting' });

    expect(await resolver.resolve({ interaction, outcome: 'answered', answer: RETREAT, by: ALICE }, 0)).toMatchObject({ status: 'resolved', wake: 2 });
    expect(await jobIds(run)).toEqual([jobId(run, 1), jobId(run, 2)]);
  });

  it("a job numbered above a live run's counter raises it, waiting or queued; never lowers it; leaves an ended run alone", async () => {
    const store = makeStore();
    const { run } = await waitingRun(store);
    await admin.hset(store.ctx.keys.run(TENANT, run.runId), 'wake', 5);
    expect(await takeJob(store, run, 3)).toEqual({ status: 'idle', runStatus: 'waiting' });
    expect(await counter(store, run)).toBe(5);

    const queued = await newRun(store);
    expect(await takeJob(store, queued, 7)).toMatchObject({ status: 'acquired' });
    expect(await counter(store, queued)).toBe(7);

    const ended = await newRun(store);
    expect(await store.runs.end(await acquire(store, ended), { status: 'finished', reason: 'finish' })).toMatchObject({ status: 'ended' });
    expect(await takeJob(store, ended, 2)).toEqual({ status: 'idle', runStatus: 'finished' });
    expect(await counter(store, ended)).toBe(0);
  });

  it('an early job that gave up without taking the run (out of attempts) raises the counter as taking it would have', async () => {
    const store = makeStore();
    const { run, lease } = await waitingRun(store);
    expect(await store.runs.end({ ...lease, token: '' }, { status: 'failed', reason: 'internal_error', error: 'x' }, false, undefined, 1)).toEqual({ status: 'lost' });
    expect(await counter(store, run)).toBe(1);
    expect((await runHash(store, run)).status).toBe('waiting');
  });
});
