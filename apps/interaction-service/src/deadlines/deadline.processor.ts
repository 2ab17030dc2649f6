import { Inject, Injectable } from '@nestjs/common';
import type { Job } from 'bullmq';
import { DeadlineJobSchema, QUEUES, parseOrThrow, type DeadlineJob } from '@parley/contracts';
import { metrics, type ParleyConfig } from '@parley/platform';
import { InteractionResolver, PARLEY_CONFIG, ParleyQueues, ParleyStore, QueueProcessor } from '@parley/store';

/** Interaction ids taken per read of the tenant's deadlines, and resolved at once. */
const BATCH = 64;

export interface DeadlineSweep {
  expired: number;
  /** Entries whose interaction was no longer open (resolved in a race, or gone after retention). */
  dropped: number;
  /** The due time of the next timer job, or null when the tenant has no deadline left. */
  next: number | null;
}

/**
 * A tenant's deadline timer fired: every interaction of the tenant whose deadline has passed is
 * resolved as expired (silence on a question means "no answer"), then the timer is re-armed at
 * the earliest deadline left. One job per tenant, not one per question.
 */
@Injectable()
export class DeadlineProcessor extends QueueProcessor<DeadlineJob> {
  private readonly resolver: InteractionResolver;

  constructor(
    @Inject(PARLEY_CONFIG) config: ParleyConfig,
    private readonly store: ParleyStore,
    private readonly queues: ParleyQueues,
  ) {
    super(QUEUES.deadlines, config, { prefix: store.ctx.keys.bullPrefix(), concurrency: 8 });
    this.resolver = new InteractionResolver(store, queues);
  }

  async process(job: Job<DeadlineJob>): Promise<DeadlineSweep> {
    const { tenant } = parseOrThrow(DeadlineJobSchema, job.data, 'deadline job');
    const sweep: DeadlineSweep = { expired: 0, dropped: 0, next: null };
    for (;;) {
      const due = await this.store.deadlines.due(tenant, Date.now(), BATCH);
      if (due.length === 0) {
        break;
      }
      const outcomes = await Promise.all(due.map((interactionId) => this.expire(tenant, interactionId)));
      sweep.expired += outcomes.filter((o) => o === 'expired').length;
      sweep.dropped += outcomes.filter((o) => o === 'dropped').length;
    }
    sweep.next = await this.store.deadlines.rearm(tenant);
    if (sweep.next !== null) {
      await this.queues.scheduleDeadlineTimer(tenant, sweep.next);
    }
    return sweep;
  }

  private async expire(tenant: string, interactionId: string): Promise<'expired' | 'dropped'> {
    const interaction = await this.store.interactions.get(tenant, interactionId);
    const result = interaction?.status === 'open' ? await this.resolver.resolve({ interaction, outcome: 'expired', by: { kind: 'deadline' } }) : null;
    if (result?.status !== 'resolved' || !interaction) {
      // Whatever else happened to it, this entry must not be read again (the resolve that won removed it already).
      await this.store.deadlines.drop(tenant, interactionId);
      return 'dropped';
    }
    if (interaction.deadline) {
      const lateMs = Math.max(0, Date.now() - Date.parse(interaction.deadline));
      metrics.deadlineLateness.observe(lateMs / 1000);
      this.logger.log({ msg: 'deadline resolved an unanswered interaction', tenant, runId: interaction.runId, interactionId, lateMs });
    }
    return 'expired';
  }
}
