import type { ParleyEvent } from '@parley/contracts';
import { transactionReplies, type StoreContext } from './store.context';
import { userDigest } from './keys';
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
    const k = this.ctx.keys;
    return this.replaySeqs(tenant, [k.runEventSeqs(tenant, runId), k.run(tenant, runId)], 'seqsCut', since, limit);
  }

  /**
   * `owner`'s events of the whole tenant (a member's tenant-wide replay), read through the owner's
   * seqs rather than the tenant stream, so the replay costs what the owner's own events cost. While
   * the stream still holds events from after `since` that were not filed by owner (an older release
   * wrote them), it is a page of the tenant's events, all owners', as {@link replayTenant} reads it;
   * the caller filters, and its next page starts further on.
   */
  async replayOwner(tenant: string, owner: string, since: number, limit: number): Promise<EventPage> {
    const k = this.ctx.keys;
    const multi = this.ctx.redis.multi().get(k.ownerSeqsFrom(tenant)).get(k.trimmedEvents(tenant)).xrange(k.tenantEvents(tenant), '-', '+', 'COUNT', 1);
    const [from, trimmed, [oldest]] = (await transactionReplies(multi)) as [string | null, string | null, StreamEntry[]];
    const filedFrom = from === null ? Infinity : Number(from);
    const own = (): Promise<EventPage> => this.replaySeqs(tenant, [k.ownerEventSeqs(tenant, owner), k.ownerSeqCuts(tenant)], userDigest(owner), since, limit);
    if (since >= filedFrom - 1) {
      return own();
    }
    if (oldest !== undefined && seqOf(oldest[0]) < filedFrom) {
      return this.replayTenant(tenant, since, limit);
    }
    // Every unfiled event is gone from the stream: whether some after `since` were the owner's, only the trim can tell.
    const page = await own();
    return { ...page, truncated: page.truncated || Number(trimmed ?? 0) > since };
  }

  /** Events through a seqs string: `[seqs key, hash of its cut]` and the cut's field. */
  private replaySeqs(tenant: string, [seqs, cuts]: [string, string], cutField: string, since: number, limit: number): Promise<EventPage> {
    const { keys, scripts } = this.ctx;
    return readPage(tenant, since, limit, async (after, count) => {
      const [truncated, entries] = (await scripts.run('readRunEvents', [seqs, keys.tenantEvents(tenant), keys.trimmedEvents(tenant), cuts], [after, count, cutField])) as [number, StreamEntry[]];
      return { entries, truncated: truncated === 1 };
    });
  }

  async lastSeq(tenant: string): Promise<number> {
    return Number((await this.ctx.redis.get(this.ctx.keys.seq(tenant))) ?? 0);
  }

  /**
   * Whether the tenant can have issued `since` by now: at most its latest seq or, should a restart
   * have rolled its counter back (see emit.lua's nextSeq), the floor of seqs issued now (Redis's
   * clock), with a minute's slack for the clocks of a Cluster's nodes.
   */
  async issued(tenant: string, since: number): Promise<SeqCheck> {
    const latest = await this.lastSeq(tenant);
    if (since <= latest) {
      return { status: 'issued' };
    }
    const [seconds, micros] = await this.ctx.redis.time();
    const floor = (Number(seconds) - SEQ_EPOCH_S) * 100_000 + Math.floor(Number(micros) / 10);
    return since <= floor + CLOCK_SLACK ? { status: 'issued' } : { status: 'ahead', latest };
  }
}

/** `ahead`: no event of the tenant can have that seq yet; `latest` is the tenant's newest. */
export type SeqCheck = { status: 'issued' } | { status: 'ahead'; latest: number };

/** The epoch of seqs (2026-01-01, as emit.lua counts them). */
const SEQ_EPOCH_S = 1_767_225_600;
/** A minute in seq units (10 µs). */
const CLOCK_SLACK = 60 * 100_000;

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
    after = seqOf(page.entries[page.entries.length - 1][0]);
  }
  return { events, truncated };
}

/** The seq of a stream id (`0-<seq>`). */
function seqOf(id: string): number {
  return Number(id.slice(id.indexOf('-') + 1));
}
