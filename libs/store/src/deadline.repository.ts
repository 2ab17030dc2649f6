import { NO_DEADLINE_SCORE } from './interaction.repository';
import type { StoreContext } from './store.context';

/**
 * A tenant's deadlines are the scores of its open-interaction index (interaction id by deadline,
 * epoch ms; those without one score past every deadline): `park` files them, whatever resolves an
 * interaction drops it, in the same step. One timer job per tenant fires at the earliest (see the
 * deadline timer in includes/emit.lua).
 */
export class DeadlineRepository {
  constructor(private readonly ctx: StoreContext) {}

  /** Interaction ids whose deadline is at or before `nowMs`, earliest first. */
  due(tenant: string, nowMs: number, limit: number): Promise<string[]> {
    return this.ctx.redis.zrangebyscore(this.ctx.keys.openInteractions(tenant), '-inf', String(Math.min(nowMs, NO_DEADLINE_SCORE - 1)), 'LIMIT', 0, limit);
  }

  /** The earliest deadline of an open interaction (epoch ms), or null. */
  async earliest(tenant: string): Promise<number | null> {
    const [, score] = await this.ctx.redis.zrange(this.ctx.keys.openInteractions(tenant), '0', '0', 'WITHSCORES');
    return score === undefined || Number(score) >= NO_DEADLINE_SCORE ? null : Number(score);
  }

  /** Drops an index entry whose interaction is no longer open (or no longer exists). */
  async drop(tenant: string, interactionId: string): Promise<void> {
    await this.ctx.redis.zrem(this.ctx.keys.openInteractions(tenant), interactionId);
  }

  /** Points the tenant's timer at its earliest deadline and returns it (the caller schedules that timer job), or clears it. */
  async rearm(tenant: string): Promise<number | null> {
    const { keys, scripts } = this.ctx;
    const due = (await scripts.run('rearmDeadlineTimer', [keys.openInteractions(tenant), keys.deadlineTimer(tenant)], [NO_DEADLINE_SCORE])) as number | null;
    return due ?? null;
  }
}
