import type { Run, RunStatus } from '@parley/contracts';
import { LISTING_SCAN_LIMIT } from './interaction.listing';
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
 * reads the index a page at a time until `limit` runs are kept, over {@link LISTING_SCAN_LIMIT}
 * entries at most per call: `next` is where the following call goes on from, null at the end.
 * Index entries of runs past their retention are dropped as they are met.
 */
export async function listRuns(ctx: StoreContext, tenant: string, filter: RunListFilter): Promise<RunPage> {
  const index = ctx.keys.runIndex(tenant);
  const kept: Array<{ run: Run; after: IndexPosition }> = [];
  const batch = Math.max(filter.limit, 50);
  let at = filter.after ? parsePosition(filter.after) : START;
  let looked = 0;
  let ended = false;
  while (kept.length < filter.limit && looked < LISTING_SCAN_LIMIT) {
    // By score (creation ms) and a count into the runs of that ms: runs started meanwhile, newer,
    // shift nothing, so a listing read over several calls gives each run once.
    const rows = await ctx.redis.zrevrangebyscore(index, at.score, '-inf', 'WITHSCORES', 'LIMIT', at.skip, batch);
    if (rows.length === 0) {
      ended = true;
      break;
    }
    const page: Array<{ id: string; score: string }> = [];
    const pipeline = ctx.redis.pipeline();
    for (let i = 0; i < rows.length; i += 2) {
      page.push({ id: rows[i], score: rows[i + 1] });
      pipeline.hgetall(ctx.keys.run(tenant, rows[i]));
    }
    const replies = (await pipeline.exec()) ?? [];
    const gone: string[] = [];
    replies.forEach(([, hash], i) => {
      const h = hash as Record<string, string>;
      const { id, score } = page[i];
      if (!h.status) {
        // Removed below, so it is not counted into its ms.
        gone.push(id);
        at = at.score === score ? at : { score, skip: 0 };
        return;
      }
      at = at.score === score ? { score, skip: at.skip + 1 } : { score, skip: 1 };
      const run = toRun(tenant, id, h);
      if ((!filter.status || run.status === filter.status) && (!filter.owner || run.owner === filter.owner)) {
        kept.push({ run, after: at });
      }
    });
    looked += page.length;
    if (gone.length > 0) {
      await ctx.redis.zrem(index, ...gone);
    }
  }
  const given = kept.slice(0, filter.limit);
  // Full: the next page starts after the last run given. Short: after the last entry looked at
  // (a position, naming no run the caller may not see), unless the index ended.
  const next = kept.length >= filter.limit ? given[given.length - 1].after : ended ? null : at;
  return { runs: given.map(({ run }) => run), next: next && formatPosition(next) };
}

/** Where a listing of runs stands in the run index: past `skip` runs of creation ms `score` ('+inf': the start). */
interface IndexPosition {
  score: string;
  skip: number;
}

const START: IndexPosition = { score: '+inf', skip: 0 };

function formatPosition({ score, skip }: IndexPosition): string {
  return `${score}.${skip}`;
}

/** The cursor's shape is checked at the edge (RunsCursorSchema). */
function parsePosition(cursor: string): IndexPosition {
  const [score, skip] = cursor.split('.');
  return { score, skip: Number(skip) };
}
