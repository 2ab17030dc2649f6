import type { Interaction, LogEntry } from '@parley/contracts';
import { toInteraction } from './interaction.hash';
import type { StoreContext } from './store.context';

/** A page of a listing of interactions; `next` is where the following page starts (null: the listing is over). */
export interface InteractionPage {
  interactions: Interaction[];
  next: string | null;
}

export interface InteractionListing {
  keep: (interaction: Interaction) => boolean;
  limit: number;
  /** The `next` of the page before (its shape is checked at the edge). */
  after?: string;
}

/** A sorted set of open interactions: its key, and how its members name interactions. */
export interface InteractionIndex {
  key: string;
  idOf(member: string): string;
  memberOf(id: string): string;
}

/** Entries a filtered listing looks at, at most per call (of an index of open interactions, or of a run's log). */
export const LISTING_SCAN_LIMIT = 10_000;
/** Log entries read at a time when listing a run's interactions. */
const LOG_PAGE = 500;

/**
 * Where a listing of an index stands: past every entry scored below `score`, and past those scored
 * `score` whose member sorts up to `id`'s. A position names an entry, not a count of entries, so
 * interactions that close meanwhile (they leave the index) shift nothing: each open one is listed once.
 */
interface IndexPosition {
  score: string;
  id: string;
}

/**
 * Open interactions of an index in its order, from `after` on, read a page at a time until `limit`
 * are kept, so a filter (a member's own, an agent) never shortens a page it could have filled. It
 * looks at {@link LISTING_SCAN_LIMIT} entries at most per call: `next` then says where to go on.
 */
export async function listIndexed(ctx: StoreContext, tenant: string, index: InteractionIndex, listing: InteractionListing): Promise<InteractionPage> {
  const kept: Array<{ interaction: Interaction; at: IndexPosition }> = [];
  const batch = Math.max(listing.limit, 100);
  let at = listing.after === undefined ? null : parseIndexPosition(listing.after);
  let looked = 0;
  let ended = false;
  while (kept.length < listing.limit && looked < LISTING_SCAN_LIMIT) {
    const entries = await entriesAfter(ctx, index, at, batch);
    if (entries.length === 0) {
      ended = true;
      break;
    }
    const found = await loadInteractions(ctx, tenant, entries.map((entry) => entry.id));
    for (const entry of entries) {
      at = entry;
      const interaction = found.get(entry.id);
      if (interaction?.status === 'open' && listing.keep(interaction)) {
        kept.push({ interaction, at: entry });
      }
    }
    looked += entries.length;
  }
  const given = kept.slice(0, listing.limit);
  // Full: the next page starts after the last one given. Short: after the last entry looked at,
  // unless the index ended.
  const next = kept.length >= listing.limit ? given[given.length - 1].at : ended ? null : at;
  return { interactions: given.map(({ interaction }) => interaction), next: next && `${next.score}.${next.id}` };
}

/** Up to `count` entries past `at` (from the start without it), in index order. */
async function entriesAfter(ctx: StoreContext, index: InteractionIndex, at: IndexPosition | null, count: number): Promise<IndexPosition[]> {
  const entries: IndexPosition[] = [];
  if (at !== null) {
    // Entries of one score are in member order (byte order, as JavaScript compares these ASCII keys).
    const past = index.memberOf(at.id);
    const ties = await ctx.redis.zrangebyscore(index.key, at.score, at.score, 'LIMIT', 0, LISTING_SCAN_LIMIT);
    for (const member of ties) {
      if (member > past && entries.length < count) {
        entries.push({ score: at.score, id: index.idOf(member) });
      }
    }
  }
  if (entries.length < count) {
    const rows = await ctx.redis.zrangebyscore(index.key, at === null ? '-inf' : `(${at.score}`, '+inf', 'WITHSCORES', 'LIMIT', 0, count - entries.length);
    for (let i = 0; i < rows.length; i += 2) {
      entries.push({ score: rows[i + 1], id: index.idOf(rows[i]) });
    }
  }
  return entries;
}

function parseIndexPosition(cursor: string): IndexPosition {
  const dot = cursor.indexOf('.');
  return { score: cursor.slice(0, dot), id: cursor.slice(dot + 1) };
}

/**
 * A run's interactions kept by `keep`, newest first from `after` (a position in the run's log; from
 * its end without it), `limit` of them given in the order they were asked. The log names each one (a
 * question or checkpoint entry), so no index is kept: it is read a page at a time, over
 * {@link LISTING_SCAN_LIMIT} entries at most per call. `next` goes back to older ones.
 */
export async function listForRun(ctx: StoreContext, tenant: string, runId: string, listing: InteractionListing): Promise<InteractionPage> {
  const kept: Array<{ interaction: Interaction; position: number }> = [];
  const logKey = ctx.keys.runLog(tenant, runId);
  // From the end as it stands now: the log only grows, so entries appended meanwhile shift nothing.
  const length = await ctx.redis.llen(logKey);
  const from = listing.after === undefined ? length - 1 : Math.min(Number(listing.after), length - 1);
  const oldest = Math.max(0, from - LISTING_SCAN_LIMIT + 1);
  let end = from;
  for (; kept.length < listing.limit && end >= oldest; end -= LOG_PAGE) {
    const start = Math.max(oldest, end - LOG_PAGE + 1);
    const lines = await ctx.redis.lrange(logKey, start, end);
    const named: Array<{ id: string; position: number }> = [];
    lines.forEach((line, i) => {
      const entry = JSON.parse(line) as LogEntry;
      // An automatic checkpoint has an entry but no interaction: it is not found below.
      if (entry.type === 'question' || entry.type === 'checkpoint') {
        named.push({ id: entry.interactionId, position: start + i });
      }
    });
    const found = await loadInteractions(ctx, tenant, named.map(({ id }) => id));
    for (const { id, position } of named.reverse()) {
      const interaction = found.get(id);
      if (interaction && listing.keep(interaction)) {
        kept.push({ interaction, position });
      }
    }
  }
  const given = kept.slice(0, listing.limit);
  const next = kept.length >= listing.limit ? given[given.length - 1].position - 1 : Math.max(oldest, end + 1) - 1;
  return { interactions: given.map(({ interaction }) => interaction).reverse(), next: next >= 0 ? String(next) : null };
}

async function loadInteractions(ctx: StoreContext, tenant: string, ids: string[]): Promise<Map<string, Interaction>> {
  const found = new Map<string, Interaction>();
  if (ids.length === 0) {
    return found;
  }
  const pipeline = ctx.redis.pipeline();
  ids.forEach((id) => pipeline.hgetall(ctx.keys.interaction(tenant, id)));
  const replies = (await pipeline.exec()) ?? [];
  replies.forEach(([, hash], i) => {
    const fields = hash as Record<string, string>;
    if (fields.runId) {
      found.set(ids[i], toInteraction(tenant, ids[i], fields));
    }
  });
  return found;
}
