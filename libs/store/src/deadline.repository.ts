import { NO_DEADLINE_SCORE } from './interaction.repository';
import type { StoreContext } from './store.context';

/** One interaction a deadline sweep expired, and the wake of its run (null: the run was not waiting). */
export interface Expired {
  interactionId: string;
  runId: string;
  wake: number | null;
  deadlineMs: number;
}

/**
 * A tenant's deadlines are the scores of its open-interaction index (interaction id by deadline,
 * epoch ms; those without one score past every deadline): `park` files them, whatever resolves an
 * interaction drops it, in the same step. One timer job per tenant fires at the earliest (see the
 * deadline timer in includes/emit.lua).
 */
export class DeadlineRepository {
  constructor(private readonly ctx: StoreContext) {}

  /**
   * Expires up to `limit` open interactions whose deadline has passed by Redis's clock, earliest
   * first, in one step (what resolve-interaction does for each, claims aside). `dropped`: entries of
   * interactions that were no longer open; `redisNowMs`: the time they were judged at.
   */
  async expireDue(tenant: string, limit: number): Promise<{ expired: Expired[]; dropped: number; redisNowMs: number }> {
    const now = this.ctx.clock.now();
    const k = this.ctx.keys;
    const { keys, args } = this.ctx.prologue(tenant, '', '', now);
    const reply = (await this.ctx.scripts.run(
      'expireDue',
      [...keys, k.openInteractions(tenant), k.openApprovals(tenant)],
      [...args, limit, this.ctx.options.retentionSecs, k.interaction(tenant, ''), k.runPrefix(tenant), NO_DEADLINE_SCORE],
    )) as Array<string | number>;
    const expired: Expired[] = [];
    for (let i = 0; i + 4 <= reply.length - 2; i += 4) {
      const wake = Number(reply[i + 2]);
      expired.push({ interactionId: String(reply[i]), runId: String(reply[i + 1]), wake: wake >= 0 ? wake : null, deadlineMs: Number(reply[i + 3]) });
    }
    return { expired, dropped: Number(reply[reply.length - 2]), redisNowMs: Number(reply[reply.length - 1]) };
  }

  /** The earliest deadline of an open interaction (epoch ms), or null. */
  async earliest(tenant: string): Promise<number | null> {
    const [, score] = await this.ctx.redis.zrange(this.ctx.keys.openInteractions(tenant), '0', '0', 'WITHSCORES');
    return score === undefined || Number(score) >= NO_DEADLINE_SCORE ? null : Number(score);
  }

  /** Points the tenant's timer at its earliest deadline and returns it (the caller schedules that timer job), or clears it. */
  async rearm(tenant: string): Promise<number | null> {
    const { keys, scripts } = this.ctx;
    const due = (await scripts.run('rearmDeadlineTimer', [keys.openInteractions(tenant), keys.deadlineTimer(tenant)], [NO_DEADLINE_SCORE])) as number | null;
    return due ?? null;
  }
}
