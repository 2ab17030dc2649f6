import { Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { Worker, type Job, type WorkerOptions } from 'bullmq';
import { createRedis, type ParleyConfig, type RedisTarget } from '@parley/platform';
import { isRedisAway } from './connection-error';
import { LostLocks, lostLockJobId } from './lost-lock';

/**
 * BullMQ's worker, whose lock renewal can be stopped without its close: the close stops it only
 * once the active jobs are done, and until then its timer fires every lockDuration / 4 for good.
 */
class AbandonableWorker<T> extends Worker<T> {
  stopLockRenewal(): Promise<void> {
    return this.lockManager.close();
  }
}

/** A BullMQ worker with its own blocking connection, closed with it. */
export class QueueWorker<T> {
  private readonly connection;
  readonly worker: AbandonableWorker<T>;
  private closing?: Promise<void>;

  constructor(
    redis: string | RedisTarget,
    queue: string,
    handler: (job: Job<T>, token?: string) => Promise<unknown>,
    options: Omit<WorkerOptions, 'connection'>,
  ) {
    this.connection = createRedis(redis, 'blocking', { purpose: `${queue} worker` });
    this.worker = new AbandonableWorker<T>(queue, handler, { ...options, connection: this.connection });
  }

  get connected(): boolean {
    return this.connection.status === 'ready';
  }

  /** Stops taking jobs (the active ones go on); {@link finishClose} waits for them. */
  beginClose(): void {
    // BullMQ keeps the promise of the first close, so a forced close after it would be the same one.
    this.closing ??= this.worker.close();
  }

  /**
   * Waits for the active jobs until `until()` (epoch ms; looked at again when reached, so it may
   * move on while a job is still within its time), then disconnects. The wait is bounded: BullMQ's
   * close can hang for good when Redis restarted under the worker (taskforcesh/bullmq#2430, #4656),
   * and a stopping process must still exit; a job still running then is recovered as stalled.
   * (One such hang: a close while the worker's blocking connection waits to reconnect. BullMQ waits
   * for its 'end', which ioredis never emits when disconnected between two attempts.)
   */
  async finishClose(until: () => number): Promise<'closed' | 'abandoned'> {
    this.beginClose();
    let outcome: 'closed' | 'abandoned' = 'abandoned';
    for (let left = Math.max(until() - Date.now(), MIN_CLOSE_WAIT_MS); left > 0; left = until() - Date.now()) {
      if (await settlesWithin(this.closing!, left)) {
        outcome = 'closed';
        break;
      }
    }
    if (outcome === 'abandoned') {
      // BullMQ's close, which stops it, still waits: its timer alone would keep the process alive.
      await this.worker.stopLockRenewal();
    }
    this.connection.disconnect();
    return outcome;
  }
}

/** A close whose time is up before it began (another one took it) still gets this long. */
const MIN_CLOSE_WAIT_MS = 1000;

/**
 * How long a queue's close or a connection's QUIT may take at shutdown: after a Redis restart
 * either can wait for good (taskforcesh/bullmq#2430), and a process that cannot exit is worse than
 * one that drops its sockets.
 */
export const CLOSE_BOUND_MS = 5000;

/**
 * How long a close over `connection` (a QUIT, a queue's close) may wait: CLOSE_BOUND_MS, or nothing
 * while the connection is away, since the close would only wait for it to come back.
 */
export function closeBoundOver(connection: { status: string }): number {
  return connection.status === 'ready' ? CLOSE_BOUND_MS : 0;
}

/** True when `promise` settles within `ms`. */
export async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true, () => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Worker options under which the job of a process that died is back in its queue within seconds,
 * where BullMQ's defaults (a 30 s lock, a stalled check every 30 s) leave it for up to a minute: a
 * deadline timer or a sweep would wait that long too. The lock is as long as a run lease (BullMQ
 * renews it while the job runs); a dead process's job is moved back at most the lock plus two
 * stalled checks after the crash (one marks it, the next moves it): with the default 3 s lease,
 * within ~4 s. A job may stall ten times (event-loop stalls, restarts) before it fails.
 */
export function takeoverOptions(leaseMs: number): Pick<WorkerOptions, 'lockDuration' | 'stalledInterval' | 'maxStalledCount'> {
  return { lockDuration: leaseMs, stalledInterval: Math.max(250, Math.min(1000, Math.floor(leaseMs / 6))), maxStalledCount: 10 };
}

/**
 * Base of every job handler in the apps: it owns the BullMQ wiring and its lifecycle, so a
 * processor is just its `process` method (and, where needed, a look at the worker's events). A
 * dead process's jobs are taken over within seconds ({@link takeoverOptions}) unless `options` say otherwise.
 */
export abstract class QueueProcessor<T> implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  protected readonly logger = new Logger(this.constructor.name);
  private queueWorker?: QueueWorker<T>;
  private closeBy?: number;
  private readonly lostLocks = new LostLocks();

  protected constructor(
    readonly queueName: string,
    private readonly config: ParleyConfig,
    private readonly options: Omit<WorkerOptions, 'connection'>,
  ) {}

  abstract process(job: Job<T>, token?: string): Promise<unknown>;

  /** Hook for processors that watch the worker's events. */
  protected watch(_worker: Worker<T>): void {}

  onApplicationBootstrap(): void {
    const options = { ...takeoverOptions(this.config.leaseMs), ...this.options };
    this.queueWorker = new QueueWorker<T>(this.config, this.queueName, (job, token) => this.process(job, token), options);
    this.queueWorker.worker.on('error', (error) => this.onWorkerError(error));
    this.watch(this.queueWorker.worker);
  }

  /** The log line of a job another worker took over from this one (its `jobId` and `err` are added). */
  protected lostJobLine(_jobId: string): { msg: string } & Record<string, unknown> {
    return { msg: `${this.queueName} job taken over by another worker: this worker lost its lock` };
  }

  private onWorkerError(error: Error): void {
    const jobId = lostLockJobId(error);
    if (jobId === undefined) {
      if (isRedisAway(error)) {
        // Redis is away: its connections say so themselves, once and then every 10 s.
        this.logger.debug(`worker error while Redis is away: ${error.message}`);
        return;
      }
      this.logger.error(`worker error: ${error.message}`);
      return;
    }
    // A takeover, not a fault: the lease fenced this worker off. BullMQ reports it several times
    // per job (each failed renewal, each failed move of the job), so it is one warning, the rest debug.
    const line = { ...this.lostJobLine(jobId), jobId, err: error.message };
    if (this.lostLocks.isNew(jobId)) {
      this.logger.warn(line);
    } else {
      this.logger.debug(line);
    }
  }

  /** Resolves when the worker runs and its Redis connection is up; rejects saying why not. */
  readiness(): Promise<void> {
    const worker = this.queueWorker?.worker;
    if (!worker?.isRunning()) {
      return Promise.reject(new Error('not taking jobs'));
    }
    // Its connection sits in a blocking read: a PING would wait behind it, so ask its state.
    if (!this.queueWorker?.connected) {
      return Promise.reject(new Error('its Redis connection is down'));
    }
    return Promise.resolve();
  }

  /**
   * Every worker of the process stops taking jobs here, before any waits for its own (Nest runs this
   * hook for every module first): the waits then overlap instead of adding up.
   */
  beforeApplicationShutdown(): void {
    // Running jobs get the grace period (the run processor hands its runs back at its end) and a
    // little more to record how they ended.
    this.closeBy = Date.now() + this.config.shutdownGraceMs + 5000;
    if (this.queueWorker) {
      this.logger.log({ msg: 'stopping: no new jobs; running ones get the grace period', queue: this.queueName, graceMs: this.config.shutdownGraceMs });
      this.queueWorker.beginClose();
    }
  }

  async onApplicationShutdown(): Promise<void> {
    const outcome = await this.queueWorker?.finishClose(() => this.closeDeadline());
    if (outcome && outcome !== 'closed') {
      this.logger.warn(`the ${this.queueName} worker did not close in time (${outcome})`);
    }
  }

  /** Until when (epoch ms) the shutdown waits for the running jobs; looked at again when reached. */
  protected closeDeadline(): number {
    return (this.closeBy ??= Date.now() + this.config.shutdownGraceMs + 5000);
  }
}
