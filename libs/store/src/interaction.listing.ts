import { ValidationFailedError, type Interaction, type LogEntry } from '@parley/contracts';
import { toInteraction } from './interaction.hash';
import { LISTING_SCAN_LIMIT, walkIndex, type ListedIndex } from './index.position';
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

/** Log entries read at a time when listing a run's interactions. */
const LOG_PAGE = 500;

/**
 * Open interactions of an index in its order, from `after` on (see {@link walkIndex}), read a page at
 * a time until `limit` are kept, so a filter (a member's own, an agent) never shortens a page it
 * could have filled.
 */
export async function listIndexed(ctx: StoreContext, tenant: string, index: ListedIndex, listing: InteractionListing): Promise<InteractionPage> {
  const { items, next } = await walkIndex(
    ctx,
    index,
    listing.after,
    Math.max(listing.limit, 100),
    async (entries) => {
      const found = await loadInteractions(ctx, tenant, entries.map((entry) => entry.id));
      return entries.map(({ id }) => {
        const interaction = found.get(id);
        return interaction?.status === 'open' && listing.keep(interaction) ? interaction : undefined;
      });
    },
    listing.limit,
  );
  return { interactions: items, next };
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
  // A page's `next` is a position the log had then, and a log only grows (or is gone with its run).
  if (listing.after !== undefined && length > 0 && Number(listing.after) >= length) {
    throw new ValidationFailedError('query', [{ field: 'after', reason: 'must be the "next" of a previous page of this listing' }]);
  }
  const from = listing.after === undefined ? length - 1 : Number(listing.after);
  const oldest = Math.max(0, from - LISTING_SCAN_LIMIT + 1);
  let end = from;
  // One more than the page holds, if the scan finds it: a full page that ends the listing says so.
  for (; kept.length <= listing.limit && end >= oldest; end -= LOG_PAGE) {
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
  const next = kept.length > listing.limit ? given[given.length - 1].position - 1 : Math.max(oldest, end + 1) - 1;
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
  const nowMs = ctx.clock.nowMs();
  replies.forEach(([, hash], i) => {
    const fields = hash as Record<string, string>;
    if (fields.runId) {
      found.set(ids[i], toInteraction(tenant, ids[i], fields, nowMs));
    }
  });
  return found;
}
