import type { Logger } from '@nestjs/common';
import { metrics } from '@parley/platform';
import { isRedisAway } from '@parley/store';

export type Entry = [id: string, fields: string[] | null];

/**
 * How often each event stream entry failed to route here, with Redis answering (recording its
 * deliveries threw: a key of the wrong type, say). One that failed `tries` times is given up, so
 * that the takeover of idle entries stops trying it for ever. A failure because Redis went away
 * counts nothing. The counts are this process's: an entry that another dispatcher takes over, or
 * that outlives a restart, gets its tries again there.
 */
export class RouteFailures {
  private readonly counts = new Map<string, number>();

  constructor(
    private readonly tries: number,
    private readonly logger: Logger,
  ) {}

  /** The entry routed: its failures are forgotten. */
  routed(stream: string, id: string): void {
    this.counts.delete(`${stream}|${id}`);
  }

  /** Counts the entry's failure; true when it has now had its tries (it is logged and counted as given up, the caller acknowledges it). */
  failed(tenant: string, stream: string, [id, fields]: Entry, error: unknown): boolean {
    if (isRedisAway(error)) {
      return false;
    }
    const key = `${stream}|${id}`;
    const count = (this.counts.get(key) ?? 0) + 1;
    if (count < this.tries) {
      this.counts.set(key, count);
      return false;
    }
    this.counts.delete(key);
    this.logger.error({
      msg: `gave up routing an event to webhooks after ${count} failed tries: recording its deliveries failed every time`,
      tenant,
      entryId: id,
      type: typeOf(fields),
      err: String(error),
    });
    metrics.webhookEventsAbandoned.inc();
    return true;
  }
}

/** The event type of a stream entry (its `t` field), for the log. */
function typeOf(fields: string[] | null): string | undefined {
  const at = fields?.indexOf('t') ?? -1;
  return at >= 0 && at % 2 === 0 ? fields![at + 1] : undefined;
}
