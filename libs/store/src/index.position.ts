import type { StoreContext } from './store.context';

/** Entries a filtered listing looks at, at most per call (of an index, or of a run's log). */
export const LISTING_SCAN_LIMIT = 10_000;

/** A sorted set a listing walks: its key, its order, and how its members name what it lists. */
export interface ListedIndex {
  key: string;
  order: 'ascending' | 'descending';
  idOf(member: string): string;
  memberOf(id: string): string;
}

/**
 * Where a listing of an index stands: past every entry before score `score` in the index's order, and
 * past the entries of that score up to `id`'s (entries of one score are in member order, reversed in a
 * descending index); `id` null: past every entry of that score. A position names an entry, not a count
 * of entries, so entries added or removed meanwhile shift nothing: each one is listed once.
 */
interface IndexPosition {
  score: string;
  id: string | null;
}

/** `<score>.<id>`, or `<score>` alone past every entry of that score (its shape is checked at the edge). */
function parsePosition(cursor: string): IndexPosition {
  const dot = cursor.indexOf('.');
  return dot < 0 ? { score: cursor, id: null } : { score: cursor.slice(0, dot), id: cursor.slice(dot + 1) };
}

function formatPosition(at: IndexPosition): string {
  return at.id === null ? at.score : `${at.score}.${at.id}`;
}

type Entry = { score: string; id: string };

/**
 * Up to `count` entries past `at` (from the start without it), in the index's order; with
 * `sameScore`, only the rest of `at`'s score.
 */
async function entriesAfter(ctx: StoreContext, index: ListedIndex, at: IndexPosition | null, count: number, sameScore = false): Promise<Entry[]> {
  const ascending = index.order === 'ascending';
  let entries: Entry[] = [];
  if (at !== null && at.id !== null) {
    // By its rank while the entry is there: one step however many share its score.
    const past = (await ctx.scripts.run('indexAfter', [index.key], [index.memberOf(at.id), count, index.order])) as string[] | null;
    if (past !== null) {
      entries = pairsOf(past, index);
      return sameScore ? entries.filter((entry) => entry.score === at.score) : entries;
    }
    // It left the index (closed, expired): the rest of its score, compared as JavaScript compares
    // strings, which is Redis' byte order for these ASCII members.
    const member = index.memberOf(at.id);
    const ties = ascending
      ? await ctx.redis.zrangebyscore(index.key, at.score, at.score, 'LIMIT', 0, LISTING_SCAN_LIMIT)
      : await ctx.redis.zrevrangebyscore(index.key, at.score, at.score, 'LIMIT', 0, LISTING_SCAN_LIMIT);
    entries = ties.filter((tie) => (ascending ? tie > member : tie < member)).slice(0, count).map((tie) => ({ score: at.score, id: index.idOf(tie) }));
  }
  if (entries.length < count && !sameScore) {
    const from = at === null ? (ascending ? '-inf' : '+inf') : `(${at.score}`;
    const rows = ascending
      ? await ctx.redis.zrangebyscore(index.key, from, '+inf', 'WITHSCORES', 'LIMIT', 0, count - entries.length)
      : await ctx.redis.zrevrangebyscore(index.key, from, '-inf', 'WITHSCORES', 'LIMIT', 0, count - entries.length);
    entries.push(...pairsOf(rows, index));
  }
  return entries;
}

function pairsOf(rows: string[], index: ListedIndex): Entry[] {
  const entries: Entry[] = [];
  for (let i = 0; i < rows.length; i += 2) {
    entries.push({ score: rows[i + 1], id: index.idOf(rows[i]) });
  }
  return entries;
}

/**
 * Walks an index from `after` in pages of `batch`, handing each page to `read` (which gives, for each
 * entry, what the caller lists, or undefined for an entry it may not see or does not keep), until
 * `limit` items are kept or {@link LISTING_SCAN_LIMIT} entries were looked at. `next`: past the last
 * item given when `limit` were, unless nothing follows it; past the last entry looked at when the
 * scan limit cut the walk short, naming only its score (the walk finishes the score), so that it
 * names no entry the caller may not see; null when the index ended.
 */
export async function walkIndex<T>(
  ctx: StoreContext,
  index: ListedIndex,
  after: string | undefined,
  batch: number,
  read: (entries: Entry[]) => Promise<Array<T | undefined>>,
  limit: number,
): Promise<{ items: T[]; next: string | null }> {
  let at = after === undefined ? null : parsePosition(after);
  let looked = 0;
  const kept: Array<{ item: T; entry: Entry }> = [];
  const items = (): T[] => kept.slice(0, limit).map(({ item }) => item);
  for (;;) {
    const finishing = looked >= LISTING_SCAN_LIMIT && at !== null;
    const entries = await entriesAfter(ctx, index, at, batch, finishing);
    if (entries.length === 0) {
      return { items: items(), next: finishing && at !== null ? at.score : null };
    }
    const listed = await read(entries);
    entries.forEach((entry, i) => {
      const item = listed[i];
      if (item !== undefined) {
        kept.push({ item, entry });
      }
    });
    looked += entries.length;
    at = entries[entries.length - 1];
    if (kept.length >= limit) {
      const last = kept[limit - 1].entry;
      // Something follows the last one given: the rest of this page, or of the index.
      // (A short page is the index's end, unless it was cut to the rest of a score.)
      const more = last !== at || ((finishing || entries.length === batch) && (await entriesAfter(ctx, index, last, 1)).length > 0);
      return { items: items(), next: more ? formatPosition(last) : null };
    }
  }
}
