import { Queue, type ConnectionOptions, type JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { QUEUES, jobIds, type DeadlineJob, type RunJob, type ScheduleJob } from '@parley/contracts';
import { canonicalJson } from '@parley/tools';

const KEEP: JobsOptions = {
  removeOnComplete: { age: 3600, count: 1000 },
  removeOnFail: { age: 7 * 24 * 3600, count: 5000 },
};

function runJobOptions(job: RunJob): JobsOptions {
  return { ...KEEP, jobId: jobIds.run(job), attempts: 5, backoff: { type: 'exponential', delay: 1000 } };
}

/** A job scheduler Parley wants registered: one agent schedule, firing `data` on its cron in `timezone`. */
export interface WantedSchedule {
  id: string;
  cron: string;
  timezone: string;
  data: ScheduleJob;
}

const SCHEDULE_JOB_OPTIONS: JobsOptions = { removeOnComplete: true, removeOnFail: 1000, attempts: 5, backoff: { type: 'exponential', delay: 1000 } };

/** A registered job scheduler and when it fires next (epoch ms), null when BullMQ knows no next time. */
export interface RegisteredSchedule {
  id: string;
  next: number | null;
}

/**
 * The only place that adds BullMQ jobs. Every job id is derived from Parley's own ids, so a
 * retried add is a no-op while the first job exists, and a late duplicate finds its work done.
 */
export class ParleyQueues {
  readonly runs: Queue<RunJob>;
  readonly deadlines: Queue<DeadlineJob>;
  readonly schedules: Queue<ScheduleJob>;
  readonly sweeper: Queue;
  /** `runs` again, on the connection the store's scripts go over (see enqueueRunBehindScripts), made on first use. */
  private runsBehindScripts?: Queue<RunJob>;

  /**
   * `scriptConnection`: the store's own connection to a single Redis (not a cluster, where the job
   * and a run's keys live on different nodes), when this process adds jobs behind its scripts.
   */
  constructor(
    connection: ConnectionOptions,
    readonly prefix: string,
    private readonly scriptConnection?: Redis,
  ) {
    this.runs = quiet(new Queue<RunJob>(QUEUES.runs, { connection, prefix }));
    this.deadlines = quiet(new Queue<DeadlineJob>(QUEUES.deadlines, { connection, prefix }));
    this.schedules = quiet(new Queue<ScheduleJob>(QUEUES.schedules, { connection, prefix }));
    this.sweeper = quiet(new Queue(QUEUES.sweeper, { connection, prefix }));
  }

  /** Whether enqueueRunBehindScripts can keep its order. */
  get ordersBehindScripts(): boolean {
    return this.scriptConnection !== undefined;
  }

  /** Every queue above, for dashboards and gauges. */
  all(): Queue[] {
    return [this.runs, this.deadlines, this.schedules, this.sweeper];
  }

  async enqueueRun(job: RunJob): Promise<void> {
    await this.runs.add('advance', job, runJobOptions(job));
  }

  /**
   * Adds a run's job on the store's connection: Redis runs it after every script this process sent
   * over it before, replies or not (one connection keeps its order). Without such a connection it
   * adds it as enqueueRun does, with no order.
   */
  async enqueueRunBehindScripts(job: RunJob): Promise<void> {
    if (!this.scriptConnection) {
      return this.enqueueRun(job);
    }
    const queue = (this.runsBehindScripts ??= quiet(new Queue<RunJob>(QUEUES.runs, { connection: this.scriptConnection, prefix: this.prefix })));
    try {
      await queue.add('advance', job, runJobOptions(job));
    } catch (error) {
      // A queue whose start failed (its connection's first reply, say) fails every add after it: the next use starts another.
      if (this.runsBehindScripts === queue) {
        this.runsBehindScripts = undefined;
        queue.close().catch(() => undefined);
      }
      throw error;
    }
  }

  /** Many at once, in one round trip (the runs a deadline sweep woke). */
  async enqueueRuns(jobs: RunJob[]): Promise<void> {
    if (jobs.length > 0) {
      await this.runs.addBulk(jobs.map((job) => ({ name: 'advance', data: job, opts: runJobOptions(job) })));
    }
  }

  /**
   * A tenant's deadline timer job, due at `dueMs` of Redis's clock (`redisNowMs`: that clock now, as
   * the caller reads it). Its delayed score is `dueMs` itself (the job's timestamp is on Redis's
   * clock too), whatever the caller's host clock says; BullMQ promotes it when the promoting host's
   * clock reaches that. Removed once done (complete or failed), so the same due time can be
   * scheduled again by the sweeper if its deadlines are still filed.
   */
  async scheduleDeadlineTimer(tenant: string, dueMs: number, redisNowMs: number): Promise<void> {
    await this.deadlines.add(
      'due',
      { tenant },
      { jobId: jobIds.deadlineTimer(tenant, dueMs), timestamp: redisNowMs, delay: Math.max(0, dueMs - redisNowMs), removeOnComplete: true, removeOnFail: true, attempts: 10, backoff: { type: 'exponential', delay: 500 } },
    );
  }

  /**
   * Makes the registered job schedulers exactly `wanted`: a scheduler registered as wanted is left
   * alone, one missing or changed is upserted, and a registered scheduler whose id is not wanted is
   * removed. So every process may sync at start, and a restart does not drop a firing that fell due
   * while no worker ran (an upsert would delete its delayed job and schedule the next slot).
   * One schedule that cannot be registered (a cron BullMQ rejects) does not stop the others: the
   * failures are returned, and such an id is left as it was.
   */
  async syncSchedules(wanted: WantedSchedule[]): Promise<Array<{ id: string; error: string }>> {
    const failed: Array<{ id: string; error: string }> = [];
    for (const schedule of wanted) {
      try {
        if (!(await this.isRegisteredAs(schedule))) {
          await this.schedules.upsertJobScheduler(
            schedule.id,
            { pattern: schedule.cron, tz: schedule.timezone },
            { name: 'schedule', data: schedule.data, opts: SCHEDULE_JOB_OPTIONS },
          );
        }
      } catch (error) {
        failed.push({ id: schedule.id, error: error instanceof Error ? error.message : String(error) });
      }
    }
    const keep = new Set(wanted.map((schedule) => schedule.id));
    for (const registered of await this.listSchedules()) {
      if (!keep.has(registered.id)) {
        await this.schedules.removeJobScheduler(registered.id);
      }
    }
    return failed;
  }

  /** The scheduler of that id is registered with the same cron, time zone, data and job options. */
  private async isRegisteredAs(schedule: WantedSchedule): Promise<boolean> {
    const registered = await this.schedules.getJobScheduler(schedule.id);
    return (
      registered !== undefined &&
      registered.pattern === schedule.cron &&
      registered.tz === schedule.timezone &&
      canonicalJson(registered.template?.data ?? null) === canonicalJson(schedule.data) &&
      canonicalJson(registered.template?.opts ?? null) === canonicalJson(SCHEDULE_JOB_OPTIONS)
    );
  }

  /** Every registered job scheduler of the schedules queue, soonest first. */
  async listSchedules(): Promise<RegisteredSchedule[]> {
    const schedulers = await this.schedules.getJobSchedulers(0, -1, true);
    return schedulers.map((scheduler) => ({ id: scheduler.key, next: typeof scheduler.next === 'number' && Number.isFinite(scheduler.next) ? scheduler.next : null }));
  }

  async close(): Promise<void> {
    await Promise.all([this.runs.close(), this.deadlines.close(), this.schedules.close(), this.sweeper.close(), this.runsBehindScripts?.close()]);
  }
}

/**
 * A queue re-emits its connection's errors, and BullMQ prints each one nobody listens to (several a
 * second while Redis is away): they are logged once where the connection was opened (createRedis).
 * A command that fails still rejects its own promise.
 */
export function quiet<Q extends { on(event: 'error', listener: (error: Error) => void): unknown }>(queue: Q): Q {
  queue.on('error', () => undefined);
  return queue;
}
