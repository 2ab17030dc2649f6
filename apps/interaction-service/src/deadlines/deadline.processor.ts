import { Inject, Injectable } from '@nestjs/common';
import type { Job } from 'bullmq';
import { DeadlineJobSchema, QUEUES, parseOrThrow, type DeadlineJob } from '@parley/contracts';
import { metrics, type ParleyConfig } from '@parley/platform';
import { InteractionResolver, PARLEY_CONFIG, ParleyQueues, ParleyStore, QueueProcessor } from '@parley/store';

/** Resolves an interaction nobody answered in time; silence on a question means "no answer". */
@Injectable()
export class DeadlineProcessor extends QueueProcessor<DeadlineJob> {
  private readonly resolver: InteractionResolver;

  constructor(
    @Inject(PARLEY_CONFIG) config: ParleyConfig,
    private readonly store: ParleyStore,
    queues: ParleyQueues,
  ) {
    super(QUEUES.deadlines, config, { prefix: store.ctx.keys.bullPrefix(), concurrency: 32 });
    this.resolver = new InteractionResolver(store, queues);
  }

  async process(job: Job<DeadlineJob>): Promise<string> {
    const { tenant, interactionId } = parseOrThrow(DeadlineJobSchema, job.data, 'deadline job');
    const interaction = await this.store.interactions.get(tenant, interactionId);
    if (!interaction || interaction.status !== 'open') {
      return 'already resolved';
    }
    const result = await this.resolver.resolve({ interaction, outcome: 'expired', by: { kind: 'deadline' } });
    if (result.status === 'resolved' && interaction.deadline) {
      const lateMs = Math.max(0, Date.now() - Date.parse(interaction.deadline));
      metrics.deadlineLateness.observe(lateMs / 1000);
      this.logger.log({ msg: 'deadline resolved an unanswered interaction', tenant, runId: interaction.runId, interactionId, lateMs });
    }
    return result.status;
  }
}
