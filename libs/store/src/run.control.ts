import { TERMINAL_STATUSES, type Actor, type Run } from '@parley/contracts';
import type { ParleyQueues } from './queues';
import type { CancelResult, EndResult, Lease, ParentWake, RunEnding } from './run.types';
import type { ParleyStore } from './store';

/** How many times a stop re-reads a run whose open interaction changed under it. */
const STOP_ATTEMPTS = 5;

/**
 * Ending and stopping runs with what must follow: a sub-agent's end wakes its parent (the job is
 * enqueued here), a stop cancels the open interaction's deadline and stops the run's sub-agents.
 */
export class RunControl {
  constructor(
    private readonly store: ParleyStore,
    private readonly queues: ParleyQueues,
  ) {}

  /** Ends a run; a sub-agent's end wakes its parent, and sub-agents still running are stopped. */
  async end(target: Lease, ending: RunEnding, options: { fenced?: boolean; parentRunId?: string; jobWake?: number } = {}): Promise<EndResult> {
    const result = await this.store.runs.end(target, ending, options.fenced ?? true, options.parentRunId, options.jobWake);
    if (result.status === 'ended') {
      await this.wakeParent(target.tenant, result.parentWake);
      await this.stopChildren(target.tenant, target.runId, { kind: 'system' });
    } else if (result.status === 'already' && options.parentRunId) {
      await this.ensureQueued(target.tenant, options.parentRunId);
    }
    return result;
  }

  /**
   * Marks failed (`internal_error`) a run whose job (for wake counter `wake`) ran out of attempts.
   * Unfenced: a run nobody advances is ended; one parked by another job, held under a live lease, or
   * woken since (a later job has it) is in good hands and answers `lost`. `missing`: the run is gone
   * (its retention is over).
   */
  async failExhausted(tenant: string, runId: string, wake: number, error: string): Promise<EndResult | { status: 'missing' }> {
    const run = await this.store.runs.get(tenant, runId);
    if (!run) {
      return { status: 'missing' };
    }
    return this.end(
      { tenant, runId, owner: run.owner, token: '' },
      { status: 'failed', reason: 'internal_error', error },
      { fenced: false, jobWake: wake, ...(run.parentRunId ? { parentRunId: run.parentRunId } : {}) },
    );
  }

  /**
   * A queued run gets its job (again): the job id comes from the wake counter, so a repeat is a
   * no-op. This repairs a step that changed a run's state in Redis and died before its enqueue.
   */
  async ensureQueued(tenant: string, runId: string): Promise<void> {
    const wake = await this.store.runs.queuedWake(tenant, runId);
    if (wake !== null) {
      await this.queues.enqueueRun({ tenant, runId, wake });
    }
  }

  /**
   * Stops a run for `by`. A run a worker holds is only flagged (that worker ends it at its next
   * step, through `stopHeld`); any other run ends at once, its open interaction cancelled (an
   * approval denied). Its sub-agents are stopped too.
   */
  async stop(tenant: string, runId: string, by: Actor): Promise<CancelResult | { status: 'missing' }> {
    for (let attempt = 0; attempt < STOP_ATTEMPTS; attempt++) {
      const run = await this.store.runs.get(tenant, runId);
      if (!run) {
        return { status: 'missing' };
      }
      if (TERMINAL_STATUSES.includes(run.status)) {
        // A stop that died half-way is finished now: the parent's wake and the cascade.
        if (run.parentRunId) {
          await this.ensureQueued(tenant, run.parentRunId);
        }
        await this.stopChildren(tenant, run.id, by);
        return { status: 'already', runStatus: run.status };
      }
      const open = run.pendingInteractionId && run.waitReason ? { id: run.pendingInteractionId, waitReason: run.waitReason } : null;
      const result = await this.store.runs.cancel(this.targetOf(run), by, open);
      if (result.status === 'already' && result.runStatus === 'missing') {
        // Gone since the read above (its retention ran out).
        return { status: 'missing' };
      }
      if (result.status !== 'stale') {
        await this.afterStop(run, result, by);
        return result;
      }
    }
    return { status: 'stale' };
  }

  /** The worker holding a run ends it because a stop was asked. */
  async stopHeld(lease: Lease, run: Pick<Run, 'parentRunId'>, by: Actor, open: { id: string; waitReason: Run['waitReason'] & string } | null): Promise<CancelResult> {
    const result = await this.store.runs.cancel({ ...lease, ...(run.parentRunId ? { parentRunId: run.parentRunId } : {}) }, by, open, lease.token);
    await this.afterStop({ tenant: lease.tenant, id: lease.runId, ...(open ? { pendingInteractionId: open.id } : {}) }, result, by);
    return result;
  }

  private async afterStop(run: Pick<Run, 'tenant' | 'id' | 'pendingInteractionId'>, result: CancelResult, by: Actor): Promise<void> {
    if (result.status !== 'cancelled') {
      return;
    }
    await this.wakeParent(run.tenant, result.parentWake);
    await this.stopChildren(run.tenant, run.id, by);
  }

  /**
   * Stops the sub-agents of a run that ended, when the process that ended it died before it could
   * (the sweeper). False when a sub-agent kept changing under the stop: the run stays filed.
   */
  async finishCascade(tenant: string, runId: string): Promise<boolean> {
    const stopped = await this.stopChildren(tenant, runId, { kind: 'system' });
    if (stopped === 'none') {
      // Its children set expired with the run meanwhile.
      await this.store.cascades.done(tenant, runId);
    }
    return stopped !== 'unsettled';
  }

  /** `none`: the run has no sub-agents (and so was not filed); `settled`: all stopped, filed off. */
  private async stopChildren(tenant: string, runId: string, by: Actor): Promise<'none' | 'settled' | 'unsettled'> {
    const children = await this.store.runs.children(tenant, runId);
    if (children.length === 0) {
      return 'none';
    }
    let settled = true;
    for (const child of children) {
      const state = await this.store.runs.get(tenant, child);
      if (state && !TERMINAL_STATUSES.includes(state.status) && (await this.stop(tenant, child, by)).status === 'stale') {
        settled = false;
      }
    }
    // A child that kept changing under the stop leaves the run filed, for the sweeper's next pass.
    if (!settled) {
      return 'unsettled';
    }
    await this.store.cascades.done(tenant, runId);
    return 'settled';
  }

  private targetOf(run: Run): { tenant: string; runId: string; owner: string; parentRunId?: string } {
    return { tenant: run.tenant, runId: run.id, owner: run.owner, ...(run.parentRunId ? { parentRunId: run.parentRunId } : {}) };
  }

  private async wakeParent(tenant: string, wake: ParentWake | null): Promise<void> {
    if (wake) {
      await this.queues.enqueueRun({ tenant, runId: wake.runId, wake: wake.wake });
    }
  }
}
