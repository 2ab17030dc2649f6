import { Inject, Injectable } from '@nestjs/common';
import { UnrecoverableError, type Job, type Worker } from 'bullmq';
import { WEBHOOK_QUEUE, WebhookDeliveryJobSchema, parseOrThrow, type WebhookDeliveryJob } from '@parley/contracts';
import { metrics, type ParleyConfig } from '@parley/platform';
import { PARLEY_CONFIG, ParleyStore, QueueProcessor, WEBHOOK_HEADERS, WebhookStore, signatureHeader, signingSecrets } from '@parley/store';
import { WebhookSender } from './webhook.sender';

/**
 * Sends one delivery per job try. BullMQ does the retrying (attempts, exponential backoff); a
 * permanent failure ends the job at once. Every try is written to the delivery log first.
 */
@Injectable()
export class WebhookDeliveryProcessor extends QueueProcessor<WebhookDeliveryJob> {
  constructor(
    @Inject(PARLEY_CONFIG) config: ParleyConfig,
    store: ParleyStore,
    private readonly webhooks: WebhookStore,
    private readonly sender: WebhookSender,
  ) {
    // A try cut short by a crash is retried: only a job that stalls this often fails without a try recorded.
    super(WEBHOOK_QUEUE, config, { prefix: store.ctx.keys.bullPrefix(), concurrency: config.webhookConcurrency, maxStalledCount: 5 });
  }

  protected override watch(worker: Worker<WebhookDeliveryJob>): void {
    worker.on('failed', (job, error) => {
      this.settleFailed(job, error).catch((failure: unknown) => this.logger.error(`could not record a failed webhook delivery: ${String(failure)}`));
    });
  }

  /**
   * A job that failed for good with its delivery still pending (its last try could not be recorded,
   * a Redis error before the try) leaves the delivery failed, not pending for ever.
   */
  private async settleFailed(job: Job<WebhookDeliveryJob> | undefined, error: Error): Promise<void> {
    if (!job || (job.attemptsMade < (job.opts.attempts ?? 1) && !(error instanceof UnrecoverableError))) {
      return;
    }
    const payload = WebhookDeliveryJobSchema.safeParse(job.data);
    if (!payload.success) {
      return;
    }
    const { tenant, deliveryId } = payload.data;
    const record = await this.webhooks.deliveries.get(tenant, deliveryId);
    if (record?.delivery.status === 'pending') {
      await this.webhooks.deliveries.record(tenant, deliveryId, { status: 'failed', lastError: `gave up: ${error.message}` });
      metrics.webhookDeliveriesGivenUp.inc();
    }
  }

  async process(job: Job<WebhookDeliveryJob>): Promise<string> {
    const { tenant, webhookId, deliveryId } = parseOrThrow(WebhookDeliveryJobSchema, job.data, 'webhook delivery job');
    const record = await this.webhooks.deliveries.get(tenant, deliveryId);
    if (!record) {
      return 'gone';
    }
    if (record.delivery.status !== 'pending') {
      return record.delivery.status;
    }
    const endpoint = await this.webhooks.endpoints.get(tenant, webhookId);
    if (!endpoint) {
      return 'endpoint deleted';
    }
    if (!endpoint.enabled) {
      await this.webhooks.deliveries.record(tenant, deliveryId, { status: 'failed', lastError: 'the endpoint is disabled' });
      return 'endpoint disabled';
    }
    const now = new Date();
    const timestamp = Math.floor(now.getTime() / 1000);
    const result = await this.sender.send(
      endpoint.url,
      {
        'content-type': 'application/json',
        'user-agent': 'Parley-Webhooks/1',
        [WEBHOOK_HEADERS.deliveryId]: deliveryId,
        [WEBHOOK_HEADERS.eventId]: record.delivery.eventId,
        [WEBHOOK_HEADERS.timestamp]: String(timestamp),
        [WEBHOOK_HEADERS.signature]: signatureHeader(signingSecrets(endpoint, now), timestamp, record.payload),
      },
      record.payload,
    );
    const last = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    const status = result.outcome === 'delivered' ? 'delivered' : result.outcome === 'permanent' || last ? 'failed' : 'pending';
    await this.webhooks.deliveries.record(tenant, deliveryId, {
      attempt: {
        at: now.toISOString(),
        durationMs: result.durationMs,
        ...(result.status !== undefined ? { status: result.status } : {}),
        ...(result.error ? { error: result.error } : {}),
      },
      status,
      ...(result.status !== undefined ? { lastStatus: result.status } : {}),
      ...(result.error ? { lastError: result.error } : {}),
    });
    if (result.outcome === 'permanent') {
      throw new UnrecoverableError(result.error ?? 'permanent failure');
    }
    if (result.outcome === 'retry') {
      throw new Error(result.error ?? 'failed');
    }
    return 'delivered';
  }
}
