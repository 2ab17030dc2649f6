import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Job } from 'bullmq';
import { InteractionRequestSchema, QUEUES, parseOrThrow, type InteractionRequest } from '@parley/contracts';
import type { ParleyConfig } from '@parley/platform';
import { PARLEY_CONFIG, ParleyQueues, ParleyStore, QueueWorker, type OpenResult } from '@parley/store';

/** Turns each interaction request of a parking run into a stored interaction with its deadline. */
@Injectable()
export class InteractionRequestProcessor implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(InteractionRequestProcessor.name);
  private worker?: QueueWorker<InteractionRequest>;

  constructor(
    @Inject(PARLEY_CONFIG) private readonly config: ParleyConfig,
    private readonly store: ParleyStore,
    private readonly queues: ParleyQueues,
  ) {}

  onApplicationBootstrap(): void {
    this.worker = new QueueWorker<InteractionRequest>(this.config.redisUrl, QUEUES.interactionRequests, (job) => this.process(job), {
      prefix: this.store.ctx.keys.bullPrefix(),
      concurrency: 32,
    });
    this.worker.worker.on('error', (error) => this.logger.error(`worker error: ${error.message}`));
  }

  async onApplicationShutdown(): Promise<void> {
    await this.worker?.close();
  }

  async process(job: Job<InteractionRequest>): Promise<OpenResult> {
    const request = parseOrThrow(InteractionRequestSchema, job.data, 'interaction request');
    const { result, interaction } = await this.store.interactions.open(request);
    // Scheduled again on a retried request too: the deadline job id makes it a no-op, and a
    // deadline that fires for a resolved interaction changes nothing.
    if (result !== 'run_ended' && interaction.status === 'open' && interaction.deadline) {
      await this.queues.scheduleDeadline({ tenant: request.tenant, interactionId: request.interactionId }, new Date(interaction.deadline));
    }
    return result;
  }
}
