import type { Logger } from '@nestjs/common';
import { metrics, type RedisClient } from '@parley/platform';
import { WEBHOOK_GROUP } from '@parley/store';

export type Entry = [id: string, fields: string[] | null];

/** One row of XPENDING's extended form. */
type PendingRow = [id: string, consumer: string, idleMs: number, deliveries: number];

/**
 * Gives up the entries of `entries` (pending with `consumer`, just taken over) that were read
 * `tries` times or more without being routed: they are acknowledged, so no takeover reads them
 * again, and each is logged and counted. Returns the others. Redis counts every read of a pending
 * entry (XREADGROUP of history, XAUTOCLAIM), across dispatchers and restarts; a read while Redis is
 * away counts nothing, so only an entry that failed with Redis up that often is given up.
 */
export async function giveUpOverTried(
  redis: RedisClient,
  { tenant, stream, consumer }: { tenant: string; stream: string; consumer: string },
  entries: Entry[],
  tries: number,
  logger: Logger,
): Promise<Entry[]> {
  if (entries.length === 0) {
    return entries;
  }
  const rows = (await redis.xpending(stream, WEBHOOK_GROUP, entries[0][0], entries[entries.length - 1][0], entries.length, consumer)) as PendingRow[];
  const readsOf = new Map(rows.map(([id, , , deliveries]) => [id, Number(deliveries)]));
  const givenUp = entries.filter(([id]) => (readsOf.get(id) ?? 0) >= tries);
  if (givenUp.length === 0) {
    return entries;
  }
  await redis.xack(stream, WEBHOOK_GROUP, ...givenUp.map(([id]) => id));
  for (const [id, fields] of givenUp) {
    logger.error({ msg: `gave up routing an event to webhooks after ${readsOf.get(id)} reads: recording its deliveries failed every time`, tenant, entryId: id, type: typeOf(fields) });
  }
  metrics.webhookEventsAbandoned.inc(givenUp.length);
  const left = new Set(givenUp);
  return entries.filter((entry) => !left.has(entry));
}

/** The event type of a stream entry (its `t` field), for the log. */
function typeOf(fields: string[] | null): string | undefined {
  const at = fields?.indexOf('t') ?? -1;
  return at >= 0 && at % 2 === 0 ? fields![at + 1] : undefined;
}
