import type { ParleyEvent } from '@parley/contracts';
import type { StoreContext } from './store.context';
import { eventFromEntry, type StreamEntry } from './stream-entry';

/**
 * Reads events back from the streams; stream ids are `0-<seq>`, so `since` is a plain seq. A page
 * shorter than `limit` means there is nothing more: entries that hold no event (written by an
 * older release) are skipped without shortening it.
 */
export class EventRepository {
  constructor(private readonly ctx: StoreContext) {}

  readTenant(tenant: string, since: number, limit: number): Promise<ParleyEvent[]> {
    const key = this.ctx.keys.tenantEvents(tenant);
    return readPage(tenant, since, limit, (after, count) => this.ctx.redis.xrange(key, `(0-${after}`, '+', 'COUNT', count));
  }

  /** The run's events still in the tenant stream (the run keeps only their seqs). */
  readRun(tenant: string, runId: string, since: number, limit: number): Promise<ParleyEvent[]> {
    const { keys, scripts } = this.ctx;
    return readPage(tenant, since, limit, async (after, count) => {
      return (await scripts.run('readRunEvents', [keys.runEventSeqs(tenant, runId), keys.tenantEvents(tenant)], [after, count])) as StreamEntry[];
    });
  }

  async lastSeq(tenant: string): Promise<number> {
    return Number((await this.ctx.redis.get(this.ctx.keys.seq(tenant))) ?? 0);
  }
}

async function readPage(tenant: string, since: number, limit: number, read: (after: number, count: number) => Promise<StreamEntry[]>): Promise<ParleyEvent[]> {
  const events: ParleyEvent[] = [];
  for (let after = since; events.length < limit; ) {
    const wanted = limit - events.length;
    const entries = await read(after, wanted);
    entries.forEach((entry) => {
      const event = eventFromEntry(tenant, entry);
      if (event) {
        events.push(event);
      }
    });
    if (entries.length < wanted) {
      break;
    }
    const [lastId] = entries[entries.length - 1];
    after = Number(lastId.slice(lastId.indexOf('-') + 1));
  }
  return events;
}
