import type { ParleyEvent } from '@parley/contracts';
import { transactionReplies, type StoreContext } from './store.context';
import { eventFromEntry, type StreamEntry } from './stream-entry';

/** A page of events, and whether events after its `since` are missing: the tenant stream trimmed them. */
export interface EventPage {
  events: ParleyEvent[];
  truncated: boolean;
}

/**
 * Reads events back from the streams; stream ids are `0-<seq>`, so `since` is a plain seq. A page
 * shorter than `limit` means there is nothing more: entries that hold no event (written by an
 * older release) are skipped without shortening it.
 */
export class EventRepository {
  constructor(private readonly ctx: StoreContext) {}

  async readTenant(tenant: string, since: number, limit: number): Promise<ParleyEvent[]> {
    const key = this.ctx.keys.tenantEvents(tenant);
    return (await readPage(tenant, since, limit, async (after, count) => ({ entries: await this.ctx.redis.xrange(key, `(0-${after}`, '+', 'COUNT', count), truncated: false }))).events;
  }

  /**
   * As {@link readTenant}, and whether the stream had trimmed events after `since` (read in the same
   * step as the page, so an event trimmed between two reads is not missed unsaid).
   */
  replayTenant(tenant: string, since: number, limit: number): Promise<EventPage> {
    const k = this.ctx.keys;
    return readPage(tenant, since, limit, async (after, count) => {
      const multi = this.ctx.redis.multi().get(k.trimmedEvents(tenant)).xrange(k.tenantEvents(tenant), `(0-${after}`, '+', 'COUNT', count);
      const [trimmed, entries] = (await transactionReplies(multi)) as [string | null, StreamEntry[]];
      return { entries, truncated: Number(trimmed ?? 0) > after };
    });
  }

  /** The run's events still in the tenant stream (the run keeps only their seqs). */
  async readRun(tenant: string, runId: string, since: number, limit: number): Promise<ParleyEvent[]> {
    return (await this.replayRun(tenant, runId, since, limit)).events;
  }

  /** As {@link readRun}, and whether the run had events after `since` that the stream trimmed. */
  replayRun(tenant: string, runId: string, since: number, limit: number): Promise<EventPage> {
    const { keys, scripts } = this.ctx;
    return readPage(tenant, since, limit, async (after, count) => {
      const [truncated, entries] = (await scripts.run('readRunEvents', [keys.runEventSeqs(tenant, runId), keys.tenantEvents(tenant), keys.trimmedEvents(tenant), keys.run(tenant, runId)], [after, count])) as [
        number,
        StreamEntry[],
      ];
      return { entries, truncated: truncated === 1 };
    });
  }

  async lastSeq(tenant: string): Promise<number> {
    return Number((await this.ctx.redis.get(this.ctx.keys.seq(tenant))) ?? 0);
  }
}

async function readPage(
  tenant: string,
  since: number,
  limit: number,
  read: (after: number, count: number) => Promise<{ entries: StreamEntry[]; truncated: boolean }>,
): Promise<EventPage> {
  const events: ParleyEvent[] = [];
  let truncated = false;
  for (let after = since; events.length < limit; ) {
    const wanted = limit - events.length;
    const page = await read(after, wanted);
    truncated ||= page.truncated;
    page.entries.forEach((entry) => {
      const event = eventFromEntry(tenant, entry);
      if (event) {
        events.push(event);
      }
    });
    if (page.entries.length < wanted) {
      break;
    }
    const [lastId] = page.entries[page.entries.length - 1];
    after = Number(lastId.slice(lastId.indexOf('-') + 1));
  }
  return { events, truncated };
}
