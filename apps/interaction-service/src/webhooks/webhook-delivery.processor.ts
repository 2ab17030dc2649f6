import { Inject, Injectable } from '@nestjs/common';
import { DelayedError, UnrecoverableError, type Job, type Worker } from 'bullmq';
import { WEBHOOK_QUEUE, WebhookDeliveryJobSchema, parseOrThrow, type WebhookDeliveryJob } from '@parley/contracts';
import { metrics, type ParleyConfig } from '@parley/platform';
import { PARLEY_CONFIG, ParleyStore, QueueProcessor, WEBHOOK_HEADERS, WebhookSlots, WebhookStore, signatureHeader, signingSecrets, type SlotResult } from '@parley/store';
import { WebhookSender, type SendResult } from './webhook.sender';

/**
 * Sends one delivery per job try. BullMQ does the retrying (attempts, exponential backoff); a
 * permanent failure ends the job at once. Every try is written to the delivery log first.
 *
 * A try needs one of its endpoint's slots (`WebhookSlots`): a job whose endpoint is busy or paused
 * waits in the delayed set, holding no worker and using up no try, so a dead receiver never holds
 * back other endpoints' deliveries. One that waited longer than its tries would have taken is given up.
 */
@Injectable()
export class WebhookDeliveryProcessor extends QueueProcessor<WebhookDeliveryJob> {
  /** Longer than all of a delivery's retries could take: a delivery kept waiting past this is given up. */
  private readonly longestWaitMs: number;

  constructor(
    @Inject(PARLEY_CONFIG) config: ParleyConfig,
    store: ParleyStore,
    private readonly webhooks: WebhookStore,
    private readonly sender: WebhookSender,
    private readonly slots: WebhookSlots,
  ) {
    // A try cut short by a crash is retried: only a job that stalls this often fails without a try recorded.
    super(WEBHOOK_QUEUE, config, { prefix: store.ctx.keys.bullPrefix(), concurrency: config.webhookConcurrency, maxStalledCount: 5 });
    this.longestWaitMs = config.webhookBackoffMs * 2 ** config.webhookAttempts + config.webhookAttempts * config.webhookTimeoutMs;
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
    await this.giveUp(payload.data.tenant, payload.data.deliveryId, `gave up: ${error.message}`);
  }

  /** Records a delivery still pending as failed without further tries, and counts it. */
  private async giveUp(tenant: string, deliveryId: string, lastError: string): Promise<void> {
    if ((await this.webhooks.deliveries.record(tenant, deliveryId, { status: 'failed', lastError })) !== null) {
      metrics.webhookDeliveriesGivenUp.inc();
    }
  }

  /** After the try is recorded: a failure to give the slot back only delays the endpoint's next try until the slot lapses. */
  private async giveSlot(tenant: string, webhookId: string, deliveryId: string, result: SendResult): Promise<void> {
    try {
      const health = await this.slots.give(tenant, webhookId, deliveryId, result.outcome !== 'retry', result.durationMs);
      if (health.pausedUntil !== null) {
        this.logger.warn(`webhook ${webhookId} of ${tenant} paused until ${new Date(health.pausedUntil).toISOString()} after ${health.failures} failures in a row`);
      }
    } catch (error) {
      this.logger.warn(`giving back a webhook slot failed (it lapses on its own): ${(error as Error).message}`);
    }
  }

  async process(job: Job<WebhookDeliveryJob>, token?: string): Promise<string> {
    const { tenant, webhookId, deliveryId } = parseOrThrow(WebhookDeliveryJobSchema, job.data, 'webhook delivery job');
    const record = await this.webhooks.deliveries.get(tenant, deliveryId);
    if (!record) {
      return 'gone';
    }
    if (record.delivery.status !== 'pending') {
      await this.slots.forget(tenant, webhookId, deliveryId);
      return record.delivery.status;
    }
    const endpoint = await this.webhooks.endpoints.get(tenant, webhookId);
    if (!endpoint) {
      return 'endpoint deleted';
    }
    if (!endpoint.enabled) {
      await this.webhooks.deliveries.record(tenant, deliveryId, { status: 'failed', lastError: 'the endpoint is disabled' });
      await this.slots.forget(tenant, webhookId, deliveryId);
      return 'endpoint disabled';
    }
    const slot = await this.slots.take(tenant, webhookId, deliveryId);
    if (slot.status !== 'ok') {
      if (Date.now() - Date.parse(record.delivery.createdAt) > this.longestWaitMs) {
        await this.giveUp(tenant, deliveryId, `given up: ${waitReason(slot)} for longer than its tries would have taken`);
        await this.slots.forget(tenant, webhookId, deliveryId);
        return 'given up';
      }
      await job.moveToDelayed(retryAt(slot), token);
      throw new DelayedError();
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
    await this.giveSlot(tenant, webhookId, deliveryId, result);
    if (result.outcome === 'permanent') {
      throw new UnrecoverableError(result.error ?? 'permanent failure');
    }
    if (result.outcome === 'retry') {
      throw new Error(result.error ?? 'failed');
    }
    return 'delivered';
  }
}

function waitReason(slot: Exclude<SlotResult, { status: 'ok' }>): string {
  return slot.status === 'paused' ? 'the endpoint was paused after failing' : 'the endpoint had other deliveries in flight';
}

/** When a job kept from its endpoint looks again: after the pause, or about when its turn could come; spread out. */
function retryAt(slot: Exclude<SlotResult, { status: 'ok' }>): number {
  const spread = Math.random();
  return Date.now() + (slot.status === 'paused' ? slot.retryInMs + Math.round(spread * 1000) : Math.round(slot.retryInMs * (0.5 + spread)));
}
