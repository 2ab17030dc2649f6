import type { RedisClient } from '@parley/platform';

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
export interface IndexPosition {
  score: string;
  id: string | null;
}

/** `<score>.<id>`, or `<score>` alone past every entry of that score (its shape is checked at the edge). */
export function parsePosition(cursor: string): IndexPosition {
  const dot = cursor.indexOf('.');
  return dot < 0 ? { score: cursor, id: null } : { score: cursor.slice(0, dot), id: cursor.slice(dot + 1) };
}

export function formatPosition(at: IndexPosition): string {
  return at.id === null ? at.score : `${at.score}.${at.id}`;
}

/**
 * Up to `count` entries past `at` (from the start without it), in the index's order; with
 * `sameScore`, only the rest of `at`'s score.
 */
export async function entriesAfter(redis: RedisClient, index: ListedIndex, at: IndexPosition | null, count: number, sameScore = false): Promise<Array<{ score: string; id: string }>> {
  const ascending = index.order === 'ascending';
  const entries: Array<{ score: string; id: string }> = [];
  if (at !== null && at.id !== null) {
    // Compared as JavaScript compares strings, which is Redis' byte order for these ASCII members.
    const past = index.memberOf(at.id);
    const ties = ascending
      ? await redis.zrangebyscore(index.key, at.score, at.score, 'LIMIT', 0, LISTING_SCAN_LIMIT)
      : await redis.zrevrangebyscore(index.key, at.score, at.score, 'LIMIT', 0, LISTING_SCAN_LIMIT);
    for (const member of ties) {
      if ((ascending ? member > past : member < past) && entries.length < count) {
        entries.push({ score: at.score, id: index.idOf(member) });
      }
    }
  }
  if (entries.length < count && !sameScore) {
    const from = at === null ? (ascending ? '-inf' : '+inf') : `(${at.score}`;
    const rows = ascending
      ? await redis.zrangebyscore(index.key, from, '+inf', 'WITHSCORES', 'LIMIT', 0, count - entries.length)
      : await redis.zrevrangebyscore(index.key, from, '-inf', 'WITHSCORES', 'LIMIT', 0, count - entries.length);
    for (let i = 0; i < rows.length; i += 2) {
      entries.push({ score: rows[i + 1], id: index.idOf(rows[i]) });
    }
  }
  return entries;
}

/**
 * Walks an index from `after` in pages of `batch`, handing each page to `take` (which keeps what the
 * caller may see and says how many it has kept so far), until `limit` are kept or
 * {@link LISTING_SCAN_LIMIT} entries were looked at. Returns where the next call goes on from: null
 * when the index ended, else past the last entry looked at. That one may be an entry the caller may
 * not see: past the scan limit the walk finishes its score, and the position names only the score.
 */
export async function walkIndex(
  redis: RedisClient,
  index: ListedIndex,
  after: string | undefined,
  batch: number,
  take: (entries: Array<{ score: string; id: string }>) => Promise<number>,
  limit: number,
): Promise<IndexPosition | null> {
  let at = after === undefined ? null : parsePosition(after);
  let looked = 0;
  let kept = 0;
  while (kept < limit) {
    const finishing = looked >= LISTING_SCAN_LIMIT && at !== null;
    const entries = await entriesAfter(redis, index, at, batch, finishing);
    if (entries.length === 0) {
      return finishing && at !== null ? { score: at.score, id: null } : null;
    }
    kept = await take(entries);
    at = entries[entries.length - 1];
    looked += entries.length;
  }
  return at;
}
