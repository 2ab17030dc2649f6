import type { Run, RunStatus } from '@parley/contracts';
import { formatPosition, walkIndex, type IndexPosition } from './index.position';
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
 * reads the index a page at a time until `limit` runs are kept (see {@link walkIndex}); `next` names
 * the last run given when the page is full. Index entries of runs past their retention are dropped as
 * they are met.
 */
export async function listRuns(ctx: StoreContext, tenant: string, filter: RunListFilter): Promise<RunPage> {
  const key = ctx.keys.runIndex(tenant);
  const kept: Array<{ run: Run; at: IndexPosition }> = [];
  const stoppedAt = await walkIndex(
    ctx.redis,
    { key, order: 'descending', idOf: (id) => id, memberOf: (id) => id },
    filter.after,
    Math.max(filter.limit, 50),
    async (entries) => {
      const pipeline = ctx.redis.pipeline();
      entries.forEach(({ id }) => pipeline.hgetall(ctx.keys.run(tenant, id)));
      const replies = (await pipeline.exec()) ?? [];
      const gone: string[] = [];
      replies.forEach(([, reply], i) => {
        const hash = reply as Record<string, string>;
        if (!hash.status) {
          gone.push(entries[i].id);
          return;
        }
        const run = toRun(tenant, entries[i].id, hash);
        if ((!filter.status || run.status === filter.status) && (!filter.owner || run.owner === filter.owner)) {
          kept.push({ run, at: entries[i] });
        }
      });
      if (gone.length > 0) {
        await ctx.redis.zrem(key, ...gone);
      }
      return kept.length;
    },
    filter.limit,
  );
  const given = kept.slice(0, filter.limit);
  const next = kept.length >= filter.limit ? given[given.length - 1].at : stoppedAt;
  return { runs: given.map(({ run }) => run), next: next && formatPosition(next) };
}
