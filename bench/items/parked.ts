/**
 * Items 4 and 5 on one population: N parked runs, each with its open question, whose deadline is
 * filed in a tenant index by `park`. Item 4 measures the Redis bytes they hold; item 5 lets
 * their deadlines (spread over a short window) fire through the tenant's deadline timer and
 * measures how late each was resolved.
 *
 * A few hundred reference runs are parked by the real services (gateway → loop-worker). The rest
 * are written in bulk from this process through the same store repositories and the same Lua
 * scripts the services call for a first step that asks (BULK_STEPS, and the tenant's timer job
 * when park asks for one), with the log entries copied from a reference run; a structure check
 * (support/layout.ts) asserts that a bulk run's keys, types, hash fields, log entries, replayed
 * events and deadline filing are those of a reference run.
 */
import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { jobIds, type EventDraft, type InteractionRequest, type LogEntry, type Prompt } from '@parley/contracts';
import { ParleyQueues, ParleyStore, msOf } from '@parley/store';
import type { Harness } from '../../test/harness/harness';
import { QUICK, say, startHarness } from '../support/env';
import { PER_RUN, deadlineIndexIn, oneMemberZset, replayCoverage, sampleKey, shapeOf, tenantZsets, type ComponentSample, type RunScope } from '../support/layout';
import { usedMemory } from '../support/meter';
import { questionerAgent } from '../support/parley';
import { CostWindow, perCycleCosts, type PerCycleCosts } from '../support/procs';
import { deletePrefix, memoryOf, pool, scanKeys, sleep } from '../support/stats';

export const PARKED = QUICK ? 2_000 : 100_000;
const REFERENCE = QUICK ? 20 : 200;
const CALIBRATION = QUICK ? 200 : 2_000;
const SAMPLE = QUICK ? 200 : 1_000;
const WINDOW_MS = QUICK ? 10_000 : 60_000;
const IX_SERVICES = 2;
const IN_FLIGHT = 200;
const TIMEOUT_SECS = 3600;
const OWNER = 'alice';
/** The steps parkOne takes, as the report names them. */
export const BULK_STEPS =
  '`admit-run`, `create-run`, `acquire-lease`, `append-log` (the assistant turn and its `tool.call` event), and `park`, which records ' +
  'the question in the log, opens the interaction and files its deadline';
/** PARLEY_EVENTS_MAXLEN's default, which the services use too. */
const EVENTS_MAXLEN = 100_000;

export interface MemoryResults {
  runs: number;
  reference: number;
  /** Bytes per parked run by component (MEMORY USAGE, per-run keys sampled over `sample` runs, shared keys whole). */
  components: Array<{ name: string; bytes: number; perRunKey: boolean; sample?: ComponentSample }>;
  sample: number;
  /** Sum of the components, the conversation log excluded. */
  totalExclLog: number;
  log: number;
  /** INFO used_memory delta over the bulk creation, divided by the runs, minus the log's share. */
  usedMemoryExclLog: number;
  usedMemory: number;
  /** Completed `runs` jobs BullMQ keeps (removeOnComplete count 1000), spread over `runs`. */
  retainedCompleted: number;
  retainedCompletedPerJob: number;
  naive: { usedMemory: number; sampled: number; parts: Array<[string, number]> };
  creation: { ms: number; perSec: number };
  structure: string[];
  /** Open interactions when the memory was measured (all of them unless the creation ran into the deadline window). */
  openAtMeasure: number;
  /** Events the tenant stream held when the memory was measured (it is trimmed to about PARLEY_EVENTS_MAXLEN). */
  streamLength: number;
  eventsMaxLen: number;
  /** Parked runs some (`partial`) or all (`gone`) of whose `expected` events their replay no longer finds (trimmed from the tenant stream). */
  replay: { runs: number; expected: number; partial: number; gone: number };
  /** The tenant index whose score for an open interaction is its deadline. */
  deadlineIndex: string;
  /** MEMORY USAGE of a one-member zset: with a 36-byte member (an id), and a 65-byte one (past listpack's 64). */
  zsetProbe: { short: number; long: number };
}

export interface DeadlineResults {
  interactions: number;
  windowMs: number;
  interactionServices: number;
  lateness: { p50: number; p99: number; max: number; mean: number };
  /** Interactions opened after their deadline had passed (the bulk creation ran late): their lateness is the creation's. */
  openedLate: number;
  /** Timer jobs the bulk creation scheduled because park asked (the new deadline was the tenant's earliest). */
  timersScheduled: number;
  resolvedPerSec: number;
  costs: PerCycleCosts;
  allExpired: boolean;
}

interface Templates {
  assistant: LogEntry & { type: 'assistant' };
  question: LogEntry & { type: 'question' };
  prompt: Prompt;
}

/** What a first step that asks leaves behind, written through the store's scripts; `timer`: park asked for a timer job. */
async function parkOne(
  store: ParleyStore,
  queues: ParleyQueues,
  tenant: string,
  t: Templates,
  deadlineMs: number,
): Promise<{ runId: string; interactionId: string; late: boolean; timer: boolean }> {
  const runId = randomUUID();
  const interactionId = randomUUID();
  await store.limits.admitRun(tenant, OWNER, runId, { runsPerMinute: 0, userRunsPerMinute: 0, concurrentRuns: 0, userConcurrentRuns: 0, openInteractions: 0 });
  const created = await store.runs.create({ tenant, runId, owner: OWNER, agent: 'qone', task: 'do the thing', trigger: 'api' });
  expect(created.created).toBe(true);
  const lease = { tenant, runId, owner: OWNER, token: randomUUID() };
  expect((await store.runs.acquire(tenant, runId, OWNER, lease.token, { worker: 'worker-1' })).status).toBe('acquired');
  const call = { ...t.assistant.toolCalls[0], toolUseId: `toolu_${randomUUID().replace(/-/g, '').slice(0, 24)}`, effectId: `fx_${randomUUID()}` };
  const at = new Date().toISOString();
  const assistant = { ...t.assistant, toolCalls: [call], at };
  const turnEvents: EventDraft[] = [{ type: 'tool.call', data: { toolUseId: call.toolUseId, effectId: call.effectId, name: call.name, input: call.input } }];
  const question = { ...t.question, toolUseId: call.toolUseId, effectId: call.effectId, interactionId, at };
  // requestedAt is set back so that the deadline the script computes falls in the bench's window.
  const open: InteractionRequest = {
    tenant,
    runId,
    interactionId,
    owner: OWNER,
    agent: 'qone',
    waitReason: 'question',
    prompt: t.prompt,
    timeoutSecs: TIMEOUT_SECS,
    requestedAt: new Date(deadlineMs - TIMEOUT_SECS * 1000).toISOString(),
  };
  // As the worker does: a turn that only asks is recorded, with its question, by the step that parks.
  const parked = await store.runs.park(lease, 'question', interactionId, open, [assistant, question], turnEvents);
  if (parked.status !== 'parked') {
    throw new Error(`park answered ${parked.status}`);
  }
  // As the worker does: without this, a tenant whose earliest deadline this is has no timer to fire it.
  if (parked.deadlineTimer !== null) {
    await queues.scheduleDeadlineTimer(tenant, parked.deadlineTimer, store.ctx.clock.nowMs());
  }
  return { runId, interactionId, late: deadlineMs < Date.now(), timer: parked.deadlineTimer !== null };
}

/** The tenant's deadline timer points at a timer job that exists. */
async function timerJobExists(redis: Redis, prefix: string, tenant: string): Promise<boolean> {
  const timer = await redis.get(`${prefix}:{t:${tenant}}:deadline-timer`);
  return timer !== null && (await redis.exists(`${prefix}:bull:deadlines:${jobIds.deadlineTimer(tenant, Number(timer))}`)) === 1;
}

/** The naive baseline of the issue: a hash with the run and its question, one index entry, one delayed BullMQ job. */
async function naiveBaseline(url: string, admin: Redis, runs: number): Promise<MemoryResults['naive']> {
  const prefix = `n${randomUUID().slice(0, 5)}`;
  const connection = new Redis(url, { maxRetriesPerRequest: null });
  const queue = new Queue('deadlines', { connection, prefix: `${prefix}:bull` });
  try {
    await queue.waitUntilReady();
    const used0 = await usedMemory(admin);
    const ids: string[] = [];
    for (let i = 0; i < runs; i += 1000) {
      const batch = Array.from({ length: Math.min(1000, runs - i) }, () => ({ runId: randomUUID(), interactionId: randomUUID() }));
      const pipeline = connection.pipeline();
      const now = Date.now();
      for (const { runId, interactionId } of batch) {
        pipeline.hset(`${prefix}:run:${runId}`, {
          status: 'waiting',
          owner: OWNER,
          agent: 'qone',
          task: 'do the thing',
          interactionId,
          question: JSON.stringify({ kind: 'free_text', question: 'Question 1?' }),
          deadline: new Date(now + TIMEOUT_SECS * 1000).toISOString(),
          createdAt: new Date(now).toISOString(),
        });
        pipeline.zadd(`${prefix}:waiting`, now + TIMEOUT_SECS * 1000, runId);
        ids.push(runId);
      }
      await pipeline.exec();
      await queue.addBulk(batch.map(({ runId, interactionId }) => ({ name: 'expire', data: { runId, interactionId }, opts: { jobId: `dl.${interactionId}`, delay: TIMEOUT_SECS * 1000, removeOnComplete: true } })));
    }
    const used1 = await usedMemory(admin);
    const sampleIds = ids.slice(0, SAMPLE);
    const hashes = await memoryOf(admin, sampleIds.map((id) => `${prefix}:run:${id}`));
    const jobKeys = await scanKeys(admin, `${prefix}:bull:deadlines`);
    const jobs = await memoryOf(admin, jobKeys.filter((key) => /:dl\./.test(key)).slice(0, SAMPLE));
    const shared = await memoryOf(admin, [`${prefix}:waiting`, ...jobKeys.filter((key) => !/:dl\./.test(key))]);
    const mean = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0) / Math.max(1, m.size);
    const index = shared.get(`${prefix}:waiting`) ?? 0;
    let bullShared = 0;
    shared.forEach((bytes, key) => (bullShared += key === `${prefix}:waiting` ? 0 : bytes));
    const parts: Array<[string, number]> = [
      ['hash (run + question)', mean(hashes)],
      ['index entry (zset)', index / runs],
      ['delayed BullMQ job (job hash)', mean(jobs)],
      ['BullMQ delayed zset and queue keys, per run', bullShared / runs],
    ];
    return { usedMemory: (used1 - used0) / runs, sampled: parts.reduce((s, [, b]) => s + b, 0), parts };
  } finally {
    await queue.close();
    connection.disconnect();
    await deletePrefix(admin, prefix);
  }
}

function componentOf(key: string, h: Harness, prefix: string): string {
  const tag = `${prefix}:{t:${h.tenant}}:`;
  if (key.startsWith(`${prefix}:bull:`)) {
    const [queue, rest] = key.slice(prefix.length + 6).split(/:(.*)/s);
    return /^(dl|run)\./.test(rest ?? '') ? `bull:${queue}:job` : `bull:${queue}:${rest ?? ''}`;
  }
  if (!key.startsWith(tag)) {
    return key.slice(prefix.length + 1);
  }
  const rest = key.slice(tag.length);
  const run = /^run:[0-9a-f-]{36}(?::(.+))?$/.exec(rest);
  if (run) {
    return run[1] ? `run:${run[1]}` : 'run';
  }
  if (/^owner:[0-9a-f]{40}:seqs$/.test(rest)) {
    return 'owner:seqs';
  }
  return /^ix:/.test(rest) ? 'ix' : `tenant:${rest}`;
}

export const COMPONENT_LABELS: Record<string, string> = {
  run: 'run hash `run:<id>`',
  'run:seqs': "run's event seqs `run:<id>:seqs`",
  'owner:seqs': "share of the owner's event seqs `owner:<digest>:seqs`",
  'run:ix': "run's interaction index `run:<id>:ix`",
  ix: 'interaction hash `ix:<id>`',
  'tenant:events': "share of the tenant's event stream `events`",
  'tenant:runs': "share of the tenant's run index `runs`",
  'tenant:open-ix': "share of the tenant's open-interaction index `open-ix`",
  'tenant:deadlines': "share of the tenant's deadline index `deadlines`",
  'tenant:deadline-timer': "share of the tenant's `deadline-timer`",
  'tenant:active-runs': "share of the tenant's active-run index `active-runs`",
  'bull:deadlines:job': "share of the tenant's deadline timer jobs (BullMQ `deadlines:dl.<tenant>.<due>`)",
  'bull:deadlines:delayed': 'share of BullMQ `deadlines:delayed` (the timer jobs)',
};

export async function runParked(redisUrl: string, redisPid: number | undefined, admin: Redis): Promise<{ memory: MemoryResults; deadlines: DeadlineResults }> {
  const naive = await naiveBaseline(redisUrl, admin, PARKED);
  say(`4. naive baseline: ${Math.round(naive.usedMemory)} B per parked run (used_memory), ${Math.round(naive.sampled)} B (MEMORY USAGE)`);

  // A prefix as long as the default `parley` (the harness's own is longer): key names and index
  // members are part of what a parked run costs, and a zset member over 64 bytes changes its encoding.
  const prefix = `p${randomUUID().slice(0, 5)}`;
  const h = await startHarness(redisUrl, {
    name: 'bench-parked',
    workers: 1,
    interactionServices: IX_SERVICES,
    agents: [questionerAgent('qone', 1, TIMEOUT_SECS)],
    env: { PARLEY_PREFIX: prefix },
  });
  const redis = new Redis(redisUrl);
  const bullConnection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const calPrefix = `${prefix}-cal`;
  try {
    return await h.diagnose(async () => {
      const tag = `${prefix}:{t:${h.tenant}}`;
      // Reference runs, parked by the real services.
      const refIds: string[] = [];
      await pool(Array.from({ length: REFERENCE }), 20, async () => void refIds.push(await h.startRun(1, 'qone')));
      const refDeadline = Date.now() + 120_000;
      while ((await admin.zcard(`${tag}:open-ix`)) < REFERENCE || !(await timerJobExists(admin, prefix, h.tenant))) {
        if (Date.now() > refDeadline) {
          throw new Error('reference runs did not all park within 120 s');
        }
        await sleep(100);
      }
      // Nothing but the interaction-services may act from here: their deadline work is item 5. The
      // worker schedules the timer job after its park returns, hence the wait for that job above.
      await h.gateway(1).stop();
      await h.worker(1).stop();
      const storeOptions = { eventsMaxLen: EVENTS_MAXLEN, retentionSecs: 7 * 24 * 3600, leaseMs: 3000 };
      const store = new ParleyStore(redis, { prefix, ...storeOptions });
      const queues = new ParleyQueues(bullConnection, store.ctx.keys.bullPrefix());
      const scope: RunScope = { store, redis: admin, prefix, tenant: h.tenant, tenantZsets: await tenantZsets(admin, prefix, h.tenant) };
      // Taken now: once the bulk runs have written past MAXLEN events, the reference runs' events are trimmed.
      const refShape = await shapeOf(scope, refIds[0]);
      const refEvents = (await store.events.readRun(h.tenant, refIds[0], 0, 1000)).length;
      const refLog = (await admin.lrange(`${tag}:run:${refIds[0]}:log`, 0, -1)).map((line) => JSON.parse(line) as LogEntry);
      const assistant = refLog.find((e) => e.type === 'assistant') as Templates['assistant'];
      const question = refLog.find((e) => e.type === 'question') as Templates['question'];
      const templates: Templates = { assistant, question, prompt: question.prompt };

      // The bulk rate, on a throwaway prefix, places the deadline window after the creation ends.
      const calStore = new ParleyStore(redis, { prefix: calPrefix, ...storeOptions });
      const calQueues = new ParleyQueues(bullConnection, calStore.ctx.keys.bullPrefix());
      let t0 = performance.now();
      await pool(Array.from({ length: CALIBRATION }), IN_FLIGHT, async () => void (await parkOne(calStore, calQueues, h.tenant, templates, Date.now() + 3_600_000)));
      const calRate = (CALIBRATION * 1000) / (performance.now() - t0);
      await calQueues.close();
      await deletePrefix(admin, calPrefix);

      const windowStart = Date.now() + (PARKED / calRate) * 1000 * 1.4 + (QUICK ? 5_000 : 20_000);
      say(`4. bulk rate ${calRate.toFixed(0)} runs/s; deadlines from ${new Date(windowStart).toISOString()} over ${WINDOW_MS / 1000} s`);
      const used0 = await usedMemory(admin);
      const parked: Array<{ runId: string; interactionId: string; deadline: number }> = [];
      let openedLate = 0;
      let timersScheduled = 0;
      t0 = performance.now();
      await pool(Array.from({ length: PARKED }), IN_FLIGHT, async (_, i) => {
        const deadline = Math.round(windowStart + (i / PARKED) * WINDOW_MS);
        const one = await parkOne(store, queues, h.tenant, templates, deadline);
        parked.push({ runId: one.runId, interactionId: one.interactionId, deadline });
        openedLate += one.late ? 1 : 0;
        timersScheduled += one.timer ? 1 : 0;
      });
      const creationMs = performance.now() - t0;
      const used1 = await usedMemory(admin);
      say(`4. ${PARKED} runs parked in bulk in ${(creationMs / 1000).toFixed(1)} s; deadline timer jobs scheduled on park's request: ${timersScheduled}`);

      // Structure: a bulk run looks like a reference run (the newest bulk run: its events are still in the stream).
      const bulkShape = await shapeOf(scope, parked[parked.length - 1].runId);
      expect(bulkShape).toEqual(refShape);

      // Memory by component: per-run keys sampled, shared keys whole.
      const all = await scanKeys(admin, prefix);
      const sampleRuns = new Set(parked.slice(0, SAMPLE).flatMap((p) => [p.runId, p.interactionId]));
      const sampled = all.filter((key) => {
        if (!PER_RUN.test(key)) {
          return true;
        }
        const id = /([0-9a-f-]{36})(?::[a-z]+)?$/.exec(key)?.[1];
        return id !== undefined && sampleRuns.has(id);
      });
      const bytes = await memoryOf(admin, sampled);
      const perKind = new Map<string, { bytes: number; keys: number; perRun: boolean; key: string }>();
      bytes.forEach((b, key) => {
        const name = componentOf(key, h, prefix);
        const entry = perKind.get(name) ?? { bytes: 0, keys: 0, perRun: PER_RUN.test(key), key };
        entry.bytes += b;
        entry.keys += 1;
        perKind.set(name, entry);
      });
      const total = PARKED + REFERENCE;
      const components: MemoryResults['components'] = [];
      let retained = 0;
      let retainedJobs = 0;
      for (const [name, entry] of perKind) {
        if (name === 'bull:runs:job') {
          retained += entry.bytes;
          retainedJobs += entry.keys;
          continue;
        }
        // Per-run keys: mean over the sampled runs (bulk only); shared keys: whole, over every parked run.
        components.push({ name, bytes: entry.perRun ? entry.bytes / SAMPLE : entry.bytes / total, perRunKey: entry.perRun, sample: await sampleKey(admin, entry.key) });
      }
      components.sort((a, b) => b.bytes - a.bytes);
      const log = components.find((c) => c.name === 'run:log')?.bytes ?? 0;
      const totalExclLog = components.filter((c) => c.name !== 'run:log').reduce((s, c) => s + c.bytes, 0);
      const retainedPerJob = retainedJobs ? retained / retainedJobs : 0;
      const memory: MemoryResults = {
        runs: PARKED,
        reference: REFERENCE,
        components,
        sample: SAMPLE,
        totalExclLog,
        log,
        usedMemory: (used1 - used0) / PARKED,
        usedMemoryExclLog: (used1 - used0) / PARKED - log,
        retainedCompleted: (Math.min(1000, total) * retainedPerJob) / total,
        retainedCompletedPerJob: retainedPerJob,
        naive,
        creation: { ms: creationMs, perSec: (PARKED * 1000) / creationMs },
        structure: refShape,
        openAtMeasure: await admin.zcard(`${tag}:open-ix`),
        streamLength: await admin.xlen(`${tag}:events`),
        eventsMaxLen: EVENTS_MAXLEN,
        replay: { expected: refEvents, ...(await replayCoverage(scope, [...refIds, ...parked.map((p) => p.runId)], refEvents)) },
        deadlineIndex: deadlineIndexIn(refShape),
        zsetProbe: { short: await oneMemberZset(admin, `${prefix}:probe`, 36), long: await oneMemberZset(admin, `${prefix}:probe`, 65) },
      };
      say(`4. parley ${Math.round(memory.usedMemoryExclLog)} B per parked run excl. log (used_memory), ${Math.round(totalExclLog)} B (MEMORY USAGE)`);

      // Item 5: the deadlines fire; each interaction records when it was resolved.
      const waitStart = windowStart - Date.now();
      if (waitStart > 0) {
        await sleep(waitStart);
      }
      const pids: Record<string, number | undefined> = { redis: redisPid };
      h.interactionServices.forEach((s) => (pids[s.name] = s.pid));
      const window = await CostWindow.open(admin, pids);
      const resolveBy = windowStart + WINDOW_MS + 600_000;
      while ((await admin.zcard(`${tag}:open-ix`)) > REFERENCE) {
        if (Date.now() > resolveBy) {
          throw new Error(`deadlines not all resolved 10 min after the window (${await admin.zcard(`${tag}:open-ix`)} open)`);
        }
        await sleep(250);
      }
      const costs = await window.close();
      const lateness: number[] = [];
      let expired = 0;
      let lastResolved = 0;
      for (let i = 0; i < parked.length; i += 1000) {
        const pipeline = admin.pipeline();
        parked.slice(i, i + 1000).forEach((p) => pipeline.hmget(`${tag}:ix:${p.interactionId}`, 'status', 'resolvedAt'));
        const replies = (await pipeline.exec()) ?? [];
        replies.forEach(([, reply], j) => {
          const [status, resolvedAt] = reply as [string, string];
          expired += status === 'expired' ? 1 : 0;
          const at = msOf(resolvedAt);
          lastResolved = Math.max(lastResolved, at);
          lateness.push(at - parked[i + j].deadline);
        });
      }
      lateness.sort((a, b) => a - b);
      const pick = (p: number) => lateness[Math.min(lateness.length - 1, Math.max(0, Math.ceil((p / 100) * lateness.length) - 1))];
      const deadlines: DeadlineResults = {
        interactions: PARKED,
        windowMs: WINDOW_MS,
        interactionServices: IX_SERVICES,
        lateness: { p50: pick(50), p99: pick(99), max: lateness[lateness.length - 1], mean: lateness.reduce((a, b) => a + b, 0) / lateness.length },
        openedLate,
        timersScheduled,
        resolvedPerSec: (PARKED * 1000) / Math.max(1, lastResolved - windowStart),
        costs: perCycleCosts(costs, PARKED),
        allExpired: expired === PARKED,
      };
      expect(deadlines.allExpired).toBe(true);
      say(`5. deadline lateness p50 ${deadlines.lateness.p50} ms p99 ${deadlines.lateness.p99} ms max ${deadlines.lateness.max} ms (${IX_SERVICES} interaction-services)`);
      await queues.close();
      return { memory, deadlines };
    });
  } finally {
    bullConnection.disconnect();
    await redis.quit();
    await deletePrefix(admin, calPrefix);
    await h.close();
    await deletePrefix(admin, prefix);
  }
}
