import { Inject, Injectable } from '@nestjs/common';
import type { Job } from 'bullmq';
import { InteractionRequestSchema, QUEUES, parseOrThrow, type InteractionRequest } from '@parley/contracts';
import type { ParleyConfig } from '@parley/platform';
import { PARLEY_CONFIG, ParleyQueues, ParleyStore, QueueProcessor, type OpenResult } from '@parley/store';

/** Turns each interaction request of a parking run into a stored interaction with its deadline. */
@Injectable()
export class InteractionRequestProcessor extends QueueProcessor<InteractionRequest> {
  constructor(
    @Inject(PARLEY_CONFIG) config: ParleyConfig,
    private readonly store: ParleyStore,
    private readonly queues: ParleyQueues,
  ) {
    super(QUEUES.interactionRequests, config, { prefix: store.ctx.keys.bullPrefix(), concurrency: 32 });
  }

  async process(job: Job<InteractionRequest>): Promise<OpenResult> {
    const request = parseOrThrow(InteractionRequestSchema, job.data, 'interaction request');
    const { result, interaction } = await this.store.interactions.open(request);
    // Scheduled again on a retried request too: the deadline job id makes it a no-op, and a
    // deadline that fires for a resolved interaction changes nothing.
    if (result !== 'run_ended' && interaction.status === 'open' && interaction.deadline) {
      await this.queues.scheduleDeadline({ tenant: request.tenant, interactionId: request.interactionId }, new Date(interaction.deadline));
    }
    this.logger.log({ msg: `interaction ${result}`, tenant: request.tenant, runId: request.runId, interactionId: request.interactionId, kind: request.prompt.kind });
    return result;
  }
}
