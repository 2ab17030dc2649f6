import { Worker, type Job, type WorkerOptions } from 'bullmq';
import { createRedis } from '@parley/platform';

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
