import type { Actor, Answer, Interaction, Outcome } from '@parley/contracts';
import { ReplyLostError } from '@parley/platform';
import { canonicalJson } from '@parley/tools';
import type { ResolveResult } from './interaction.repository';
import type { ParleyQueues } from './queues';
import type { ParleyStore } from './store';

type ResolveInput = { interaction: Interaction; outcome: Outcome; answer?: Answer; by: Actor };

/**
 * Resolves an interaction (answer, deadline) and wakes its run: the atomic resolve decides, then
 * the resume job is enqueued with the id derived from the wake counter the script bumped.
 */
export class InteractionResolver {
  constructor(
    private readonly store: ParleyStore,
    private readonly queues: ParleyQueues,
  ) {}

  async resolve(input: ResolveInput): Promise<ResolveResult> {
    const { result, readBack } = await this.decide(input);
    const { tenant, runId } = input.interaction;
    if (result.status === 'resolved' && result.wake !== null) {
      await this.queues.enqueueRun({ tenant, runId, wake: result.wake });
    } else if (readBack || (result.status === 'conflict' && isTheSameResolution(result.interaction, input))) {
      // This very resolution, recorded by a try whose reply was lost (this one, or the caller's
      // earlier one): that try may have died before its enqueue, so the run gets its job now (a
      // no-op when it has one) rather than from the sweeper.
      const wake = await this.store.runs.queuedWake(tenant, runId);
      if (wake !== null) {
        await this.queues.enqueueRun({ tenant, runId, wake });
      }
    }
    return result;
  }

  /** The resolve step; when its reply was lost, what Redis holds tells whether it ran (`readBack`). */
  private async decide(input: ResolveInput): Promise<{ result: ResolveResult; readBack: boolean }> {
    try {
      return { result: await this.store.interactions.resolve(input), readBack: false };
    } catch (error) {
      if (!(error instanceof ReplyLostError)) {
        throw error;
      }
      const current = await this.store.interactions.get(input.interaction.tenant, input.interaction.id);
      if (current?.status === 'open') {
        // It did not run (a connection closes before or after a script, never in its middle).
        return { result: await this.store.interactions.resolve(input), readBack: false };
      }
      if (current && isTheSameResolution(current, input)) {
        return { result: { status: 'resolved', interaction: current, wake: null }, readBack: true };
      }
      return { result: current ? { status: 'conflict', interaction: current } : { status: 'missing' }, readBack: false };
    }
  }
}

/** `current` was resolved as `input` asks: same outcome, same answer, by the same actor. */
function isTheSameResolution(current: Interaction, input: ResolveInput): boolean {
  const by = current.resolvedBy;
  return (
    current.status === input.outcome &&
    by?.kind === input.by.kind &&
    by.subject === input.by.subject &&
    canonicalJson(current.answer ?? null) === canonicalJson(input.answer ?? null)
  );
}
