/**
 * The interaction-service's sweeper: a run or interaction whose BullMQ job was lost (a crash
 * between a Redis step and its enqueue, or a Redis restart from an AOF that lost its last second)
 * is found and given a job again, and the run finishes.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { QUEUES, jobIds } from '@parley/contracts';
import { ParleyQueues, ParleyStore, RedisKeys } from '@parley/store';
import { Queue } from 'bullmq';
import { RunSweeper } from '../../apps/interaction-service/src/sweeper/run.sweeper';
import { askerAgent, quickAgent } from '../support/agents';
import { TestStack, writeAgents } from '../support/stack';
import { waitFor } from '../support/wait-for';

/** A parent that delegates to a sub-agent which waits for a person's sign-off. */
const manager = {
  name: 'manager',
  model: { provider: 'scripted', turns: [{ tool_calls: [{ name: 'delegate', input: { agent: 'waiter', task: 'Wait for sign-off' } }] }, { tool_calls: [{ name: 'finish', input: { summary: 'done' } }] }] },
  tools: ['delegate', 'finish'],
  delegates: ['waiter'],
  limits: { max_iterations: 5, interaction_timeout_secs: 0 },
};
const waiter = {
  name: 'waiter',
  model: { provider: 'scripted', turns: [{ tool_calls: [{ name: 'finish', input: { summary: 'signed off' } }] }] },
  tools: ['finish'],
  stages: [{ name: 'sign', mode: 'interactive_points', points: [{ name: 'signoff', prompt: 'Sign off?', options: ['Yes'], unattended: 'ask' }] }],
  limits: { max_iterations: 5, interaction_timeout_secs: 0 },
};

/** A parent that delegates to a sub-agent which finishes at once. */
const boss = {
  name: 'boss',
  model: { provider: 'scripted', turns: [{ tool_calls: [{ name: 'delegate', input: { agent: 'finisher', task: 'Be quick' } }] }, { tool_calls: [{ name: 'finish', input: { summary: 'got {{last_answer}}' } }] }] },
  tools: ['delegate', 'finish'],
  delegates: ['finisher'],
  limits: { max_iterations: 5, interaction_timeout_secs: 0 },
};
const finisher = {
  name: 'finisher',
  model: { provider: 'scripted', turns: [{ tool_calls: [{ name: 'finish', input: { summary: 'done quickly' } }] }] },
  tools: ['finish'],
  limits: { max_iterations: 5, interaction_timeout_secs: 0 },
};

describe('sweeper', () => {
  let stack: TestStack;
  let queues: ParleyQueues;
  let keys: RedisKeys;
  let connection: Redis;

  beforeAll(async () => {
    // A 1 s lease makes the sweeper's grace (two leases) 2 s; it sweeps every 200 ms.
    stack = await TestStack.start({ agentsDir: writeAgents([quickAgent(), askerAgent('asker', 1), manager, waiter, boss, finisher]), overrides: { leaseMs: 1000, sweepMs: 200 } });
    keys = new RedisKeys(stack.config.prefix);
    connection = new Redis(stack.config.redisUrl, { maxRetriesPerRequest: null });
    queues = new ParleyQueues(connection, keys.bullPrefix());
  });

  afterAll(async () => {
    await queues.close();
    connection.disconnect();
    await stack.close();
  });

  const tenant = () => 'acme';
  const runKey = (runId: string) => keys.run(tenant(), runId);
  /** One loop-worker at most: a second start would leave the first running past close(). */
  const ensureWorker = async () => (stack.worker ? undefined : stack.startWorker());

  /** Dates the run's last change, and its entry in the in-flight index, a minute back: queued that long, as behind a slow fleet. */
  async function queuedAMinute(runId: string): Promise<void> {
    const stale = Date.now() - 60_000;
    await stack.redis.hset(runKey(runId), 'updatedAt', String(stale));
    expect(await stack.redis.zadd(keys.inflightRuns(tenant()), 'XX', 'CH', stale, runId)).toBe(1);
  }

  /** Starts a run while no worker runs and deletes its job: a queued run with no job, as a crash leaves it. */
  async function queuedWithoutJob(): Promise<{ runId: string; jobId: string }> {
    await stack.stopWorker();
    const runId = await stack.startRun('quick');
    const jobId = jobIds.run({ tenant: tenant(), runId, wake: Number(await stack.redis.hget(runKey(runId), 'wake')) });
    expect(await queues.runs.getJobState(jobId)).toBe('waiting');
    await queues.runs.remove(jobId);
    expect(await queues.runs.getJobState(jobId)).toBe('unknown');
    return { runId, jobId };
  }

  it('gives a queued run whose job was lost its job again, and the run finishes', async () => {
    const { runId, jobId } = await queuedWithoutJob();
    await waitFor(async () => (await queues.runs.getJobState(jobId)) === 'waiting', { message: 'the sweeper to enqueue the run again' });
    await ensureWorker();
    await stack.waitForStatus(runId, 'finished');
    expect((await stack.log(runId)).filter((e) => e.type === 'tool_result')).toHaveLength(2);
  });

  it('revives a running run whose worker died and whose job is gone, once its lease ran out', async () => {
    const { runId, jobId } = await queuedWithoutJob();
    // What a worker that died mid-step leaves when its job was lost too: running, an old lease.
    await stack.redis.hset(runKey(runId), 'status', 'running', 'lease', 'dead-worker', 'leaseUntil', Date.now());
    await waitFor(async () => (await queues.runs.getJobState(jobId)) === 'waiting', { message: 'the sweeper to enqueue the run again' });
    await ensureWorker();
    await stack.waitForStatus(runId, 'finished');
  });

  it("gives a tenant whose deadline timer job was lost its timer again, and the deadline fires", async () => {
    await ensureWorker();
    const runId = await stack.startRun('asker');
    const question = await stack.waitForQuestion(runId);
    const due = Date.parse(question.deadline);
    const timer = jobIds.deadlineTimer(tenant(), due);
    await waitFor(async () => (await queues.deadlines.getJobState(timer)) === 'delayed', { message: 'the timer job of the question' });
    await queues.deadlines.remove(timer);
    await stack.waitForStatus(runId, 'finished', 20_000);
    expect(await stack.redis.hget(keys.interaction(tenant(), question.id), 'status')).toBe('expired');
  });

  it('leaves a backlog alone: queued runs whose jobs still wait are not enqueued again, and a finished job of the id is replaced', async () => {
    await stack.stopWorker();
    const waiting = [await stack.startRun('quick'), await stack.startRun('quick')];
    const finished = await stack.startRun('quick');
    await Promise.all([...waiting, finished].map(queuedAMinute));
    // One run's job finished while the run stayed queued (what a Redis restart from an older AOF leaves).
    const finishedJob = jobIds.run({ tenant: tenant(), runId: finished, wake: 0 });
    await stack.redis.hset(`${keys.bullPrefix()}:runs:${finishedJob}`, 'finishedOn', Date.now());
    // (The sweeper also sweeps on its own every 200 ms: either sweep may be the one that repairs.)
    await stack.interactions!.get(RunSweeper).sweep();
    await waitFor(async () => (await queues.runs.getJob(finishedJob))?.finishedOn === undefined, { message: 'the finished job to be replaced' });
    expect(await queues.runs.getJobState(finishedJob)).toBe('waiting');
    for (const runId of waiting) {
      expect(await queues.runs.getJobState(jobIds.run({ tenant: tenant(), runId, wake: 0 }))).toBe('waiting');
    }
    await ensureWorker();
    for (const runId of [...waiting, finished]) {
      await stack.waitForStatus(runId, 'finished');
    }
  });

  it('a run whose every step fails is marked failed once its attempts are spent, not started again', async () => {
    await stack.stopWorker();
    const runId = await stack.startRun('quick');
    // A log entry no step can read: every attempt fails.
    await stack.redis.rpush(keys.runLog(tenant(), runId), '{"not a log entry"');
    await ensureWorker();
    await stack.waitForStatus(runId, 'failed', 40_000);
    expect(await stack.redis.hmget(runKey(runId), 'endReason', 'lease')).toEqual(['internal_error', null]);
    const job = await queues.runs.getJob(jobIds.run({ tenant: tenant(), runId, wake: 0 }));
    expect(job?.attemptsMade).toBe(5);
    // Each failed attempt handed the run back at once (its next one did not wait for the lease to run out).
    const store = new ParleyStore(connection, { prefix: stack.config.prefix, eventsMaxLen: 1000, retentionSecs: 60, leaseMs: 1000 });
    const statuses = (await store.events.readRun(tenant(), runId, 0, 100)).filter((e) => e.type === 'run.status').map((e) => (e.data as { status: string }).status);
    expect(statuses.join(' ')).toContain('running queued running queued running queued running queued running queued failed');
    expect(await job?.getState()).toBe('failed');
  }, 60_000);

  it('marks failed a run whose job failed for good while its worker died before marking it', async () => {
    const { runId, jobId } = await queuedWithoutJob();
    // What a worker that died right after its job's last attempt failed leaves: the job in the failed set.
    const jobKey = `${keys.bullPrefix()}:runs:${jobId}`;
    await stack.redis.hset(jobKey, 'timestamp', Date.now(), 'name', 'advance', 'data', '{}', 'finishedOn', Date.now(), 'failedReason', 'the last attempt broke');
    await stack.redis.zadd(`${keys.bullPrefix()}:runs:failed`, Date.now(), jobId);
    await queuedAMinute(runId);
    await waitFor(async () => (await stack.redis.hget(runKey(runId), 'status')) === 'failed', { message: 'the sweeper to mark the run failed' });
    expect(await stack.redis.hmget(runKey(runId), 'endReason', 'error')).toEqual(['internal_error', 'the last attempt broke']);
    expect(await queues.runs.getJobState(jobId)).toBe('failed');
  });

  it('sweeps one sweep at a time across services; a tenant whose sweep fails does not hold back the others', async () => {
    const sweeperQueue = new Queue(QUEUES.sweeper, { connection, prefix: keys.bullPrefix() });
    expect(await sweeperQueue.getGlobalConcurrency()).toBe(1);
    await sweeperQueue.close();

    const { runId, jobId } = await queuedWithoutJob();
    await queuedAMinute(runId);
    // Another tenant whose in-flight index is not a sorted set: its sweep fails.
    const broken = keys.inflightRuns('broken');
    await stack.redis.sadd(keys.tenants(), 'broken');
    await stack.redis.set(broken, 'not a zset');
    try {
      const counts = await stack.interactions!.get(RunSweeper).sweep();
      expect(counts.errors).toBe(1);
      await waitFor(async () => (await queues.runs.getJobState(jobId)) === 'waiting', { message: 'the stuck run to be enqueued again' });
    } finally {
      await stack.redis.srem(keys.tenants(), 'broken');
      await stack.redis.del(broken);
    }
    await ensureWorker();
    await stack.waitForStatus(runId, 'finished');
  });

  it('watches runs started outside the gateway too: a scheduled run created with no job gets one and finishes', async () => {
    await ensureWorker();
    // What a schedule leaves when its process dies between creating the run and enqueueing it.
    const store = new ParleyStore(connection, { prefix: stack.config.prefix, eventsMaxLen: 1000, retentionSecs: 60, leaseMs: 1000 });
    const runId = randomUUID();
    expect(await store.runs.create({ tenant: tenant(), runId, owner: 'scheduler', agent: 'quick', task: 'from a schedule', trigger: 'schedule' })).toEqual({ created: true, wake: 0 });
    expect(await queues.runs.getJobState(jobIds.run({ tenant: tenant(), runId, wake: 0 }))).toBe('unknown');
    await waitFor(async () => (await stack.redis.hget(runKey(runId), 'status')) === 'finished', { message: 'the scheduled run to finish' });
  });

  it('watches only runs in flight: a finished or parked run leaves the index; a queued run with its job is left alone', async () => {
    await ensureWorker();
    const inflight = (runId: string) => stack.redis.zscore(keys.inflightRuns(tenant()), runId);
    const finished = await stack.startRun('quick');
    await stack.waitForStatus(finished, 'finished');
    const parked = await stack.startRun('asker');
    await stack.waitForStatus(parked, 'waiting');
    expect([await inflight(finished), await inflight(parked)]).toEqual([null, null]);

    await stack.stopWorker();
    const queued = await stack.startRun('quick');
    expect(await inflight(queued)).not.toBeNull();
    // Queued within the grace: the tenant is not even swept.
    expect(await stack.interactions!.get(RunSweeper).sweep()).toMatchObject({ tenants: 1, swept: 0, runsChecked: 0 });
    await queuedAMinute(queued);
    const counts = await stack.interactions!.get(RunSweeper).sweep();
    expect(counts).toMatchObject({ tenants: 1, swept: 1, runsChecked: 1, requeued: 0, revived: 0, deadlines: 0 });
    await ensureWorker();
    await stack.waitForStatus(queued, 'finished');
    expect(await inflight(queued)).toBeNull();
  });

  it('a parent whose step died after starting its sub-agent, before recording it, takes the result of a sub-agent that ended meanwhile (it is not left waiting)', async () => {
    await stack.stopWorker();
    const store = new ParleyStore(connection, { prefix: stack.config.prefix, eventsMaxLen: 1000, retentionSecs: 60, leaseMs: 1000 });
    const parentId = await stack.startRun('boss');
    // What the dead step did: its model turn (the delegate call) and the sub-agent's creation, then
    // nothing more (no `child` entry); its lease runs out.
    const token = randomUUID();
    expect((await store.runs.acquire(tenant(), parentId, '', token)).status).toBe('acquired');
    const lease = { tenant: tenant(), runId: parentId, owner: 'alice', token };
    const effectId = `fx_${randomUUID()}`;
    const turn = { type: 'assistant' as const, text: '', toolCalls: [{ toolUseId: 'toolu_1', effectId, name: 'delegate', input: { agent: 'finisher', task: 'Be quick' } }], at: new Date().toISOString() };
    expect((await store.runs.append(lease, turn)).status).toBe('ok');
    const childId = `${parentId.slice(0, 8)}-${effectId.replace(/^fx_/, '')}`;
    expect(await store.runs.create({ tenant: tenant(), runId: childId, owner: 'alice', agent: 'finisher', task: 'Be quick', trigger: 'delegate', unattended: true, parentRunId: parentId, parentLeaseToken: token })).toMatchObject({ created: true });
    // The sub-agent runs and ends before the parent's job is retried: its result goes into the parent's log.
    await queues.enqueueRun({ tenant: tenant(), runId: childId, wake: Number(await stack.redis.hget(runKey(childId), 'wake')) });
    await ensureWorker();
    await stack.waitForStatus(childId, 'finished');
    const { run } = await stack.waitForStatus(parentId, 'finished');
    expect(run.summary).toContain('done quickly');
  });

  it('finishes a stop whose process died before it stopped the sub-agents; a stop that completes leaves nothing to finish', async () => {
    await ensureWorker();
    const cascade = (runId: string) => stack.redis.zscore(keys.cascades(tenant()), runId);
    const parkedFamily = async (): Promise<{ parent: string; child: string }> => {
      const parent = await stack.startRun('manager');
      const child = await waitFor(async () => (await stack.redis.smembers(keys.runChildren(tenant(), parent)))[0], { message: 'the sub-agent' });
      await stack.waitForStatus(child, 'waiting');
      await stack.waitForStatus(parent, 'waiting');
      return { parent, child };
    };

    // What a gateway that died right after the parent's own stop step leaves: the parent cancelled, its sub-agent waiting.
    const died = await parkedFamily();
    const store = stack.interactions!.get(ParleyStore, { strict: false });
    const { run } = await stack.run(died.parent);
    const cancelled = await store.runs.cancel({ tenant: tenant(), runId: died.parent, owner: run.owner }, { kind: 'user', subject: 'alice', role: 'member' }, { id: run.pendingInteractionId, waitReason: run.waitReason });
    expect(cancelled.status).toBe('cancelled');
    expect(await cascade(died.parent)).not.toBeNull();
    expect((await stack.run(died.child)).run.status).toBe('waiting');
    const { run: child } = await stack.waitForStatus(died.child, 'cancelled', 20_000);
    expect(child.stoppedBy).toEqual({ kind: 'system' });
    expect(await cascade(died.parent)).toBeNull();

    const stopped = await parkedFamily();
    expect((await stack.http('POST', `/v1/runs/${stopped.parent}/stop`)).status).toBe(200);
    expect((await stack.run(stopped.child)).run.status).toBe('cancelled');
    expect(await cascade(stopped.parent)).toBeNull();
  });

  it('a sub-agent whose every stop attempt finds it changed (stale) leaves its parent filed, postponed; once it can be stopped, a sweep stops it', async () => {
    await ensureWorker();
    const cascades = keys.cascades(tenant());
    const parent = await stack.startRun('manager');
    const child = await waitFor(async () => (await stack.redis.smembers(keys.runChildren(tenant(), parent)))[0], { message: 'the sub-agent' });
    await stack.waitForStatus(child, 'waiting');
    await stack.waitForStatus(parent, 'waiting');
    // The child's hash names an open interaction its stop cannot match (no wait reason): each attempt is stale.
    const waitReason = await stack.redis.hget(runKey(child), 'waitReason');
    await stack.redis.hdel(runKey(child), 'waitReason');
    expect((await stack.http('POST', `/v1/runs/${child}/stop`)).body).toMatchObject({ error: { code: 'conflict', message: expect.stringContaining('kept changing') } });

    expect((await stack.http('POST', `/v1/runs/${parent}/stop`)).status).toBe(200);
    expect((await stack.run(parent)).run.status).toBe('cancelled');
    const filed = Number(await stack.redis.zscore(cascades, parent));
    expect(filed).toBeGreaterThan(0);
    // Each sweep past the grace tries again and puts it at the back; the child is left as it was.
    await waitFor(async () => Number(await stack.redis.zscore(cascades, parent)) > filed, { message: 'the sweeper to postpone the cascade' });
    expect((await stack.run(child)).run.status).toBe('waiting');

    await stack.redis.hset(runKey(child), 'waitReason', waitReason!);
    const { run } = await stack.waitForStatus(child, 'cancelled', 20_000);
    expect(run.stoppedBy).toEqual({ kind: 'system' });
    await waitFor(async () => (await stack.redis.zscore(cascades, parent)) === null, { message: 'the cascade to be filed off' });
  });

  it('a cascade the sweeper cannot finish goes to the back and does not hold the others', async () => {
    await ensureWorker();
    const cascades = keys.cascades(tenant());
    // A filed run whose children key is unreadable (wrong type): finishing it throws, first in line.
    const broken = randomUUID();
    await stack.redis.set(keys.runChildren(tenant(), broken), 'not a set');
    await stack.redis.zadd(cascades, 1, broken);
    try {
      const parent = await stack.startRun('manager');
      const child = await waitFor(async () => (await stack.redis.smembers(keys.runChildren(tenant(), parent)))[0], { message: 'the sub-agent' });
      await stack.waitForStatus(child, 'waiting');
      await stack.waitForStatus(parent, 'waiting');
      const { run } = await stack.run(parent);
      const store = stack.interactions!.get(ParleyStore, { strict: false });
      await store.runs.cancel({ tenant: tenant(), runId: parent, owner: run.owner }, { kind: 'user', subject: 'alice', role: 'member' }, { id: run.pendingInteractionId, waitReason: run.waitReason });

      await stack.waitForStatus(child, 'cancelled', 20_000);
      expect(Number(await stack.redis.zscore(cascades, broken))).toBeGreaterThan(1);
    } finally {
      await stack.redis.del(keys.runChildren(tenant(), broken));
      await stack.redis.zrem(cascades, broken);
    }
  });
});
