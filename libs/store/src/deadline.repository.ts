import type { StoreContext } from './store.context';

/**
 * A tenant's deadlines: one sorted set of open interaction ids scored by deadline (epoch ms), filed
 * by `park` and dropped by whatever resolves the interaction, in the same step. One timer job per
 * tenant fires at the earliest one (see the deadline timer in includes/emit.lua).
 */
export class DeadlineRepository {
  constructor(private readonly ctx: StoreContext) {}

  /** Interaction ids whose deadline is at or before `nowMs`, earliest first. */
  due(tenant: string, nowMs: number, limit: number): Promise<string[]> {
    return this.ctx.redis.zrangebyscore(this.ctx.keys.deadlines(tenant), '-inf', String(nowMs), 'LIMIT', 0, limit);
  }

  /** The earliest deadline filed (epoch ms), or null. */
  async earliest(tenant: string): Promise<number | null> {
    const [, score] = await this.ctx.redis.zrange(this.ctx.keys.deadlines(tenant), '0', '0', 'WITHSCORES');
    return score === undefined ? null : Number(score);
  }

  /** Drops an entry whose interaction is no longer open (or no longer exists). */
  async drop(tenant: string, interactionId: string): Promise<void> {
    await this.ctx.redis.zrem(this.ctx.keys.deadlines(tenant), interactionId);
  }

  /** Points the tenant's timer at its earliest deadline and returns it (the caller schedules that timer job), or clears it. */
  async rearm(tenant: string): Promise<number | null> {
    const { keys, scripts } = this.ctx;
    const due = (await scripts.run('rearmDeadlineTimer', [keys.deadlines(tenant), keys.deadlineTimer(tenant)], [])) as number | null;
    return due ?? null;
  }
}
