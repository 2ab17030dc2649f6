import type { Actor, Answer, Interaction, Outcome } from '@parley/contracts';
import type { ResolveResult } from './interaction.repository';
import type { ParleyQueues } from './queues';
import type { ParleyStore } from './store';

/**
 * Resolves an interaction (answer, deadline) and wakes its run: the atomic resolve decides, then
 * the resume job is enqueued with the id derived from the wake counter the script bumped.
 */
export class InteractionResolver {
  constructor(
    private readonly store: ParleyStore,
    private readonly queues: ParleyQueues,
  ) {}

  async resolve(input: { interaction: Interaction; outcome: Outcome; answer?: Answer; by: Actor }): Promise<ResolveResult> {
    const result = await this.store.interactions.resolve(input);
    if (result.status !== 'resolved') {
      return result;
    }
    const { tenant, runId } = input.interaction;
    if (result.wake !== null) {
      await this.queues.enqueueRun({ tenant, runId, wake: result.wake });
    }
    return result;
  }
}
