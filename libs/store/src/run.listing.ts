import type { Run, RunStatus } from '@parley/contracts';
import { walkIndex } from './index.position';
import { toRun } from './run.hash';
import type { StoreContext } from './store.context';

/** A page of a listing of runs; `next` is where the following page starts (null: the listing is over). */
export interface RunPage {
  runs: Run[];
  next: string | null;
}

export interface RunListFilter {
  status?: RunStatus;
  /** Only this owner's runs (a member's listing). */
  owner?: string;
  limit: number;
  /** The `next` of the page before. */
  after?: string;
}

/**
 * Newest first, from `after` (the `next` of the page before) on. A filter (a status, a member's own)
 * reads the index a page at a time until `limit` runs are kept; `next` as {@link walkIndex} says.
 * Index entries of runs past their retention are dropped as they are met.
 */
export async function listRuns(ctx: StoreContext, tenant: string, filter: RunListFilter): Promise<RunPage> {
  const key = ctx.keys.runIndex(tenant);
  const { items, next } = await walkIndex(
    ctx,
    { key, order: 'descending', idOf: (id) => id, memberOf: (id) => id },
    filter.after,
    Math.max(filter.limit, 50),
    async (entries) => {
      const pipeline = ctx.redis.pipeline();
      entries.forEach(({ id }) => pipeline.hgetall(ctx.keys.run(tenant, id)));
      const replies = (await pipeline.exec()) ?? [];
      const hashes = replies.map(([, reply]) => reply as Record<string, string>);
      const gone = entries.filter((_, i) => !hashes[i].status).map(({ id }) => id);
      if (gone.length > 0) {
        await ctx.redis.zrem(key, ...gone);
      }
      return entries.map(({ id }, i) => {
        const run = hashes[i].status ? toRun(tenant, id, hashes[i]) : undefined;
        return run && (!filter.status || run.status === filter.status) && (!filter.owner || run.owner === filter.owner) ? run : undefined;
      });
    },
    filter.limit,
  );
  return { runs: items, next };
}
