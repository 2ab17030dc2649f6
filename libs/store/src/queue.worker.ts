import { Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { Worker, type Job, type WorkerOptions } from 'bullmq';
import { createRedis, type ParleyConfig, type RedisTarget } from '@parley/platform';

/** A BullMQ worker with its own blocking connection, closed with it. */
export class QueueWorker<T> {
  private readonly connection;
  readonly worker: Worker<T>;

  constructor(
    redis: string | RedisTarget,
    queue: string,
    handler: (job: Job<T>, token?: string) => Promise<unknown>,
    options: Omit<WorkerOptions, 'connection'>,
  ) {
    this.connection = createRedis(redis, 'blocking');
    this.worker = new Worker<T>(queue, handler, { ...options, connection: this.connection });
  }

  get connected(): boolean {
    return this.connection.status === 'ready';
  }

  /**
   * Stops taking jobs and waits for the active ones, for at most `waitMs`. The wait is bounded:
   * BullMQ's close can hang for good when Redis restarted under the worker (taskforcesh/bullmq#2430,
   * #4656), and a stopping process must still exit.
   */
  async close(waitMs: number): Promise<'closed' | 'abandoned'> {
    // BullMQ keeps the promise of the first close, so a forced close after it would be the same one:
    // past the bound the close is abandoned (a job still running there is recovered as stalled).
    const outcome = (await settlesWithin(this.worker.close(), waitMs)) ? 'closed' : 'abandoned';
    this.connection.disconnect();
    return outcome;
  }
}

/**
 * How long a queue's close or a connection's QUIT may take at shutdown: after a Redis restart
 * either can wait for good (taskforcesh/bullmq#2430), and a process that cannot exit is worse than
 * one that drops its sockets.
 */
export const CLOSE_BOUND_MS = 5000;

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
export abstract class QueueProcessor<T> implements OnApplicationBootstrap, OnApplicationShutdown {
  protected readonly logger = new Logger(this.constructor.name);
  private queueWorker?: QueueWorker<T>;

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
    this.queueWorker.worker.on('error', (error) => this.logger.error(`worker error: ${error.message}`));
    this.watch(this.queueWorker.worker);
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

  async onApplicationShutdown(): Promise<void> {
    // Running jobs get the grace period (the run processor hands its runs back at its end) and a
    // little more to record how they ended.
    const outcome = await this.queueWorker?.close(this.config.shutdownGraceMs + 5000);
    if (outcome && outcome !== 'closed') {
      this.logger.warn(`the ${this.queueName} worker did not close in time (${outcome})`);
    }
  }
}
