import type { StoreContext } from './store.context';

/**
 * Runs that ended or were stopped while they had sub-agents, until those are stopped too. The step
 * that ends a run files it here (end-run, cancel-run); whoever stops its sub-agents takes it out.
 * A process that died in between leaves it here, and the sweeper finishes the cascade.
 */
export class CascadeRepository {
  constructor(private readonly ctx: StoreContext) {}

  /** Runs of the tenant filed before `before` (epoch ms), oldest first, at most `limit`. */
  async due(tenant: string, before: number, limit: number): Promise<string[]> {
    return this.ctx.redis.zrangebyscore(this.ctx.keys.cascades(tenant), '-inf', before, 'LIMIT', 0, limit);
  }

  /** Files the run again as of `at` (epoch ms): behind the others, for a later pass. */
  async postpone(tenant: string, runId: string, at: number): Promise<void> {
    await this.ctx.redis.zadd(this.ctx.keys.cascades(tenant), 'XX', at, runId);
  }

  /** The run's sub-agents are all stopped (or ended). */
  async done(tenant: string, runId: string): Promise<void> {
    await this.ctx.redis.zrem(this.ctx.keys.cascades(tenant), runId);
  }
}
