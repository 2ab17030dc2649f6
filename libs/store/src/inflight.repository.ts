import type { StoreContext } from './store.context';

/** A tenant's in-flight runs (queued or running), as the sweeper walks them. */
export class InflightRepository {
  constructor(private readonly ctx: StoreContext) {}

  /**
   * The in-flight runs of the tenant, oldest first, `pageSize` per read. Paged by score, not rank:
   * runs leave the index while it is walked (they park, they end), which would shift ranks.
   */
  async *walk(tenant: string, pageSize: number): AsyncGenerator<string[]> {
    const key = this.ctx.keys.inflightRuns(tenant);
    const seen = new Set<string>();
    for (let from = '-inf'; ; ) {
      const page = await this.ctx.redis.zrangebyscore(key, from, '+inf', 'WITHSCORES', 'LIMIT', 0, pageSize);
      const fresh = page.filter((member, i) => i % 2 === 0 && !seen.has(member));
      if (fresh.length === 0) {
        return;
      }
      fresh.forEach((runId) => seen.add(runId));
      yield fresh;
      // From the last score on, inclusive: runs that share it are met again and skipped.
      from = page[page.length - 1];
    }
  }

  /** Up to `limit` runs of the tenant that became queued or running at `fromMs` or later, oldest first. */
  since(tenant: string, fromMs: number, limit: number): Promise<string[]> {
    return this.ctx.redis.zrangebyscore(this.ctx.keys.inflightRuns(tenant), fromMs, '+inf', 'LIMIT', 0, limit);
  }

  /** Takes out those of `runIds` that are not queued or running any more (checked in the same step). */
  async prune(tenant: string, runIds: string[]): Promise<number> {
    if (runIds.length === 0) {
      return 0;
    }
    const k = this.ctx.keys;
    return (await this.ctx.scripts.run('pruneInflight', [k.inflightRuns(tenant)], [k.runPrefix(tenant), ...runIds])) as number;
  }
}
