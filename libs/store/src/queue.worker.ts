import { Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { Worker, type Job, type WorkerOptions } from 'bullmq';
import { createRedis, type ParleyConfig } from '@parley/platform';

/** A BullMQ worker with its own blocking connection, closed with it. */
export class QueueWorker<T> {
  private readonly connection;
  readonly worker: Worker<T>;

  constructor(
    redisUrl: string,
    queue: string,
    handler: (job: Job<T>, token?: string) => Promise<unknown>,
    options: Omit<WorkerOptions, 'connection'>,
  ) {
    this.connection = createRedis(redisUrl, 'blocking');
    this.worker = new Worker<T>(queue, handler, { ...options, connection: this.connection });
  }

  async close(): Promise<void> {
    await this.worker.close();
    this.connection.disconnect();
  }
}

/**
 * Base of every job handler in the apps: it owns the BullMQ wiring and its lifecycle, so a
 * processor is just its `process` method (and, where needed, a look at the worker's events).
 */
export abstract class QueueProcessor<T> implements OnApplicationBootstrap, OnApplicationShutdown {
  protected readonly logger = new Logger(this.constructor.name);
  private queueWorker?: QueueWorker<T>;

  protected constructor(
    private readonly queue: string,
    private readonly config: ParleyConfig,
    private readonly options: Omit<WorkerOptions, 'connection'>,
  ) {}

  abstract process(job: Job<T>, token?: string): Promise<unknown>;

  /** Hook for processors that watch the worker's events. */
  protected watch(_worker: Worker<T>): void {}

  onApplicationBootstrap(): void {
    this.queueWorker = new QueueWorker<T>(this.config.redisUrl, this.queue, (job, token) => this.process(job, token), this.options);
    this.queueWorker.worker.on('error', (error) => this.logger.error(`worker error: ${error.message}`));
    this.watch(this.queueWorker.worker);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.queueWorker?.close();
  }
}
