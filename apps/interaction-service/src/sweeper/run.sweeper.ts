import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Job, Queue } from 'bullmq';
import { QUEUES, jobIds } from '@parley/contracts';
import type { ParleyConfig } from '@parley/platform';
import { PARLEY_CONFIG, ParleyQueues, ParleyStore, QueueProcessor, RunControl, lowestScoreEach, msOf } from '@parley/store';

const SCHEDULER_ID = 'sweep';

/** Run and job lookups, and tenants triaged, per pipeline. */
const LOOKUP_BATCH = 1000;
/** Tenants swept at once: each costs a few round trips, which a deployment of many tenants must not pay one after another. */
const TENANTS_AT_ONCE = 16;

/**
 * Where a job stands, from its hash and the failed set alone (O(log n), where BullMQ's getJobState
 * scans the wait list): `live` will still run (waiting, delayed, active), `completed`, `failed` for
 * good (both would make a new add of the id a no-op), `none` gone.
 */
type JobStanding = 'live' | 'completed' | 'failed' | 'none';

export interface SweepCounts {
  tenants: number;
  /** Of those, tenants with something old enough to be stuck, swept. */
  swept: number;
  runsChecked: number;
  /** Queued runs whose job was gone, enqueued again. */
  requeued: number;
  /** Running runs whose lease ran out with no job left to take them over, enqueued again. */
  revived: number;
  /** Tenants whose earliest deadline was overdue with no timer job left, given one again. */
  deadlines: number;
  /** Ended runs whose sub-agents were left running by a process that died, stopped now. */
  cascades: number;
  /** Runs whose job failed for good, without the run being marked failed (its worker died first), marked now. */
  failed: number;
  /** Tenants whose sweep failed (logged); the others were swept all the same. */
  errors: number;
}

/**
 * Repairs what a crash between two Redis steps, or a Redis restart from an AOF that lost its last
 * second, can leave behind: a run `queued` (or `running` with an expired lease) with no BullMQ job
 * to advance it, a tenant whose deadline timer job is gone, and a run that ended or was stopped
 * while its sub-agents were not stopped yet. Every repair is an idempotent enqueue or stop, so a
 * sweep that races a worker or another sweep changes nothing.
 *
 * Cost per sweep: one SMEMBERS of the deployment's tenants, then a triage of 1,000 tenants per
 * round trip: the oldest entry of each one's in-flight runs, open deadlines and unfinished cascades.
 * Only a tenant with something older than the grace (two leases) is swept: its in-flight runs
 * (queued or running, however they were started; parked runs are not in flight, so the cost does
 * not grow with them) a page of 1,000 at a time with one pipelined HMGET each, its earliest deadline
 * and its cascades, 16 tenants at a time, each on its own: one that fails is logged and counted, the
 * others are swept. So a tenant with nothing older than that (a quiet one, or one whose runs park
 * or end within seconds) costs three commands, pipelined. Job lookups happen only for runs that look stuck.
 */
@Injectable()
export class RunSweeper extends QueueProcessor<Record<string, never>> implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly graceMs: number;
  private readonly everyMs: number;

  constructor(
    @Inject(PARLEY_CONFIG) config: ParleyConfig,
    private readonly store: ParleyStore,
    private readonly queues: ParleyQueues,
    private readonly control: RunControl,
  ) {
    // A job scheduler and a global concurrency of 1 (set at start): one sweep at a time across all
    // interaction-services, however long one takes.
    super(QUEUES.sweeper, config, { prefix: store.ctx.keys.bullPrefix(), concurrency: 1 });
    // A lease renewed on time never runs out: two lease lengths past its end, its holder is gone.
    this.graceMs = 2 * config.leaseMs;
    this.everyMs = config.sweepMs;
  }

  override onApplicationBootstrap(): void {
    super.onApplicationBootstrap();
    // Idempotent: every interaction-service upserts the same scheduler; BullMQ keeps one. The scheduler
    // adds the next sweep when one starts, so without the global limit a sweep longer than the period
    // would run beside the next one, in another process.
    Promise.all([
      this.queues.sweeper.setGlobalConcurrency(1),
      this.queues.sweeper.upsertJobScheduler(SCHEDULER_ID, { every: this.everyMs }, { name: 'sweep', data: {}, opts: { removeOnComplete: true, removeOnFail: 100 } }),
    ]).catch((error: unknown) => this.logger.error(`could not register the sweeper: ${String(error)}`));
  }

  async process(_job: Job<Record<string, never>>): Promise<SweepCounts> {
    const counts = await this.sweep();
    if (counts.requeued + counts.revived + counts.deadlines + counts.cascades + counts.failed + counts.errors > 0) {
      this.logger.warn({ msg: 'sweeper repaired runs, interactions or stops a lost job or a crash left unfinished', ...counts });
    }
    return counts;
  }

  /** `now`: Redis's clock, which leases and deadlines are judged on. */
  async sweep(now = this.store.ctx.clock.nowMs()): Promise<SweepCounts> {
    const counts: SweepCounts = { tenants: 0, swept: 0, runsChecked: 0, requeued: 0, revived: 0, deadlines: 0, cascades: 0, failed: 0, errors: 0 };
    const tenants = await this.store.ctx.redis.smembers(this.store.ctx.keys.tenants());
    counts.tenants = tenants.length;
    for (let start = 0; start < tenants.length; start += LOOKUP_BATCH) {
      await this.sweepTenants(await this.needingSweep(tenants.slice(start, start + LOOKUP_BATCH), now), now, counts);
    }
    return counts;
  }

  /**
   * The tenants with an in-flight run, an open deadline or an unfinished cascade older than the grace:
   * younger ones cannot be stuck yet (a run enters the in-flight index when it becomes queued or
   * running, and both its `updatedAt` and its lease start then). A tenant whose read failed is
   * swept all the same, and its sweep reports the failure.
   */
  private async needingSweep(tenants: string[], now: number): Promise<string[]> {
    const { redis, keys } = this.store.ctx;
    const before = now - this.graceMs;
    const lowest = await lowestScoreEach(
      redis,
      tenants.flatMap((tenant) => [keys.inflightRuns(tenant), keys.openInteractions(tenant), keys.cascades(tenant)]),
    );
    // (An interaction without a deadline scores far in the future: never old enough.)
    return tenants.filter((_tenant, i) => lowest.slice(3 * i, 3 * i + 3).some((score) => score instanceof Error || (score !== null && score <= before)));
  }

  private async sweepTenants(tenants: string[], now: number, counts: SweepCounts): Promise<void> {
    let next = 0;
    const sweeper = async (): Promise<void> => {
      while (next < tenants.length) {
        const tenant = tenants[next++];
        counts.swept += 1;
        try {
          await this.sweepTenant(tenant, now, counts);
        } catch (error) {
          // One tenant's failure (a key of the wrong type, a Redis error) does not hold back the others.
          counts.errors += 1;
          this.logger.error({ msg: 'sweeper could not sweep a tenant', tenant, err: String(error) });
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(TENANTS_AT_ONCE, tenants.length) }, sweeper));
  }

  private async sweepTenant(tenant: string, now: number, counts: SweepCounts): Promise<void> {
    const { redis, keys } = this.store.ctx;
    const settled: string[] = [];
    const suspects: Array<{ runId: string; wake: number; repair: 'requeued' | 'revived' }> = [];
    // A page at a time: many runs in flight must not make one burst that stalls Redis.
    for await (const runIds of this.store.inflight.walk(tenant, LOOKUP_BATCH)) {
      const pipeline = redis.pipeline();
      runIds.forEach((runId) => pipeline.hmget(keys.run(tenant, runId), 'status', 'wake', 'leaseUntil', 'updatedAt'));
      const rows = ((await pipeline.exec()) ?? []).map(([, row]) => (row ?? []) as Array<string | null>);
      for (const [i, [status, wake, leaseUntil, updatedAt]] of rows.entries()) {
        const runId = runIds[i];
        counts.runsChecked += 1;
        // Every step that parks or ends a run takes it out of the index; this is for keys lost otherwise.
        if (status !== 'queued' && status !== 'running') {
          settled.push(runId);
        } else if (status === 'queued' && now - msOf(updatedAt ?? '') > this.graceMs) {
          suspects.push({ runId, wake: Number(wake ?? 0), repair: 'requeued' });
        } else if (status === 'running' && Number(leaseUntil ?? 0) < now - this.graceMs) {
          suspects.push({ runId, wake: Number(wake ?? 0), repair: 'revived' });
        }
      }
    }
    // A backlog (workers down or slow) makes many runs look stuck: their jobs are looked up in pipelines.
    const standings = await this.standings(
      this.queues.runs,
      suspects.map(({ runId, wake }) => jobIds.run({ tenant, runId, wake })),
    );
    for (const [i, { runId, wake, repair }] of suspects.entries()) {
      const standing = standings[i];
      if (standing === 'failed') {
        // Its attempts are spent: starting it again would fail again, for ever.
        if (await this.failRun(tenant, runId, wake)) {
          counts.failed += 1;
        }
      } else if (standing !== 'live' && (await this.revive(tenant, runId, wake, standing))) {
        counts[repair] += 1;
      }
    }
    if (await this.rearmLostTimer(tenant, now)) {
      counts.deadlines += 1;
    }
    await this.store.inflight.prune(tenant, settled);
    for (const runId of await this.store.cascades.due(tenant, now - this.graceMs, LOOKUP_BATCH)) {
      if (await this.repairCascade(tenant, runId, now)) {
        counts.cascades += 1;
      }
    }
  }

  /**
   * Enqueues the run's job for its wake counter, which has no job that will still run. A completed
   * job of that id is removed first: its id would make the enqueue a no-op (acquire takes a
   * queued run, or a running one whose lease ran out, so a surplus job finds nothing to do).
   */
  private async revive(tenant: string, runId: string, wake: number, standing: 'completed' | 'none'): Promise<boolean> {
    if (standing === 'completed') {
      await this.queues.runs.remove(jobIds.run({ tenant, runId, wake }));
    }
    const status = await this.store.ctx.redis.hget(this.store.ctx.keys.run(tenant, runId), 'status');
    if (status === 'queued') {
      await this.control.ensureQueued(tenant, runId);
    } else {
      await this.queues.enqueueRun({ tenant, runId, wake });
    }
    this.logger.warn({ msg: 'sweeper enqueued a run that had no job', tenant, runId, wake, status });
    return true;
  }

  /**
   * Marks failed a run whose job failed for good while the worker that should have marked it died
   * (or could not reach Redis). Unfenced: a run someone advances again meanwhile is left alone.
   */
  private async failRun(tenant: string, runId: string, wake: number): Promise<boolean> {
    const job = await this.queues.runs.getJob(jobIds.run({ tenant, runId, wake }));
    const ended = await this.control.failExhausted(tenant, runId, wake, job?.failedReason || 'its job ran out of attempts');
    if (ended.status !== 'ended') {
      return false;
    }
    this.logger.error({ msg: 'sweeper marked failed a run whose job ran out of attempts', tenant, runId, err: job?.failedReason });
    return true;
  }

  /**
   * Stops what a dead process left of a run's stop cascade. One that fails or stays unsettled goes
   * to the back of the tenant's cascades, so it neither stops this sweep nor holds the next ones.
   */
  private async repairCascade(tenant: string, runId: string, now: number): Promise<boolean> {
    try {
      if (await this.control.finishCascade(tenant, runId)) {
        this.logger.warn({ msg: 'sweeper stopped the sub-agents of a run whose stop did not finish', tenant, runId });
        return true;
      }
    } catch (error) {
      this.logger.error({ msg: 'sweeper could not finish a stop cascade', tenant, runId, err: String(error) });
    }
    await this.store.cascades.postpone(tenant, runId, now);
    return false;
  }

  /**
   * A tenant whose earliest deadline is well past gets a timer job for it again, unless one will
   * still run: a process that died between filing a deadline and scheduling its timer left none.
   */
  private async rearmLostTimer(tenant: string, now: number): Promise<boolean> {
    const earliest = await this.store.deadlines.earliest(tenant);
    if (earliest === null || earliest > now - this.graceMs) {
      return false;
    }
    const id = jobIds.deadlineTimer(tenant, earliest);
    const [standing] = await this.standings(this.queues.deadlines, [id]);
    if (standing === 'live') {
      return false;
    }
    if (standing === 'completed' || standing === 'failed') {
      await this.queues.deadlines.remove(id);
    }
    await this.queues.scheduleDeadlineTimer(tenant, earliest, now);
    this.logger.warn({ msg: 'sweeper rescheduled a lost deadline timer', tenant, due: new Date(earliest).toISOString() });
    return true;
  }

  private async standings(queue: Queue, ids: string[]): Promise<JobStanding[]> {
    const out: JobStanding[] = [];
    for (let start = 0; start < ids.length; start += LOOKUP_BATCH) {
      const pipeline = this.store.ctx.redis.pipeline();
      const failedSet = queue.toKey('failed');
      ids.slice(start, start + LOOKUP_BATCH).forEach((id) => pipeline.hmget(queue.toKey(id), 'timestamp', 'finishedOn').zscore(failedSet, id));
      const rows = (await pipeline.exec()) ?? [];
      for (let i = 0; i < rows.length; i += 2) {
        const [timestamp, finishedOn] = (rows[i][1] ?? [null, null]) as Array<string | null>;
        const failedAt = rows[i + 1][1] as string | null;
        out.push(timestamp === null ? 'none' : finishedOn === null ? 'live' : failedAt === null ? 'completed' : 'failed');
      }
    }
    return out;
  }
}
