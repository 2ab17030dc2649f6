import { Queue, type ConnectionOptions } from 'bullmq';
import { WEBHOOK_QUEUE, webhookJobId, type WebhookDeliveryJob } from '@parley/contracts';
import { quiet } from '../queues';

export interface WebhookQueueOptions {
  attempts: number;
  backoffMs: number;
}

/** The webhook delivery queue. A job's id is its delivery's, so adding a delivery twice sends it once. */
export class WebhookQueue {
  readonly queue: Queue<WebhookDeliveryJob>;

  constructor(
    connection: ConnectionOptions,
    prefix: string,
    private readonly options: WebhookQueueOptions,
  ) {
    this.queue = quiet(new Queue<WebhookDeliveryJob>(WEBHOOK_QUEUE, { connection, prefix }));
  }

  async enqueue(job: WebhookDeliveryJob): Promise<void> {
    await this.queue.add('deliver', job, {
      jobId: webhookJobId(job.tenant, job.deliveryId),
      attempts: this.options.attempts,
      backoff: { type: 'exponential', delay: this.options.backoffMs, jitter: 0.2 },
      // The delivery log is the record; finished jobs are kept only to absorb late duplicates.
      removeOnComplete: { age: 24 * 3600, count: 10_000 },
      removeOnFail: { age: 7 * 24 * 3600, count: 10_000 },
    });
  }

  async close(): Promise<void> {
    await this.queue.close();
  }
}
