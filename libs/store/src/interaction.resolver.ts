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
 *
 * When the caller knows the run's wake counter as it parked (`parkedWake`), the job is not held
 * back until the resolve replies: numbered one past that counter, it is sent right behind the
 * resolve on the same connection (Redis runs it second), and the run resumes a round trip sooner.
 * Should the resolve not give that number (refused, another wake came first, or a resend after
 * NOSCRIPT put the job first), the job is enqueued as usual with the number it gave, if any. The
 * early job either finds the run queued and advances it, or finds nothing to do; taking the run, or
 * giving up, it raises the run's wake counter to its number (acquire-lease.lua, end-run.lua), so no
 * later wake is given the id of a job that is done.
 */
export class InteractionResolver {
  constructor(
    private readonly store: ParleyStore,
    private readonly queues: ParleyQueues,
  ) {}

  async resolve(input: ResolveInput, parkedWake?: number): Promise<ResolveResult> {
    const { tenant, runId } = input.interaction;
    const deciding = this.decide(input);
    const predicted = parkedWake !== undefined && this.queues.ordersBehindScripts ? parkedWake + 1 : undefined;
    const early = predicted === undefined ? Promise.resolve(false) : this.queues.enqueueRunBehindScripts({ tenant, runId, wake: predicted }).then(() => true, () => false);
    const { result, readBack } = await deciding;
    if (result.status === 'resolved' && result.wake !== null) {
      if (result.wake !== predicted || !(await early)) {
        await this.queues.enqueueRun({ tenant, runId, wake: result.wake });
      }
    } else if (readBack || (result.status === 'conflict' && isTheSameResolution(result.interaction, input))) {
      // This very resolution, recorded by a try whose reply was lost (this one, or the caller's
      // earlier one): that try may have died before its enqueue, so the run gets its job now (a
      // no-op when it has one) rather than from the sweeper.
      const wake = await this.store.runs.queuedWake(tenant, runId);
      if (wake !== null) {
        await this.queues.enqueueRun({ tenant, runId, wake });
      }
    }
    // Sent behind the resolve, it has its reply by now or right after: nothing is left in flight.
    await early;
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
