import type { ParleyEvent } from '@parley/contracts';
import type { StoreContext } from './store.context';
import { eventFromEntry, type StreamEntry } from './stream-entry';

/** Reads events back from the streams; stream ids are `0-<seq>`, so `since` is a plain seq. */
export class EventRepository {
  constructor(private readonly ctx: StoreContext) {}

  async readTenant(tenant: string, since: number, limit: number): Promise<ParleyEvent[]> {
    return eventsOf(tenant, await this.ctx.redis.xrange(this.ctx.keys.tenantEvents(tenant), `(0-${since}`, '+', 'COUNT', limit));
  }

  /** The run's events still in the tenant stream (the run keeps only their seqs). */
  async readRun(tenant: string, runId: string, since: number, limit: number): Promise<ParleyEvent[]> {
    const { keys, scripts } = this.ctx;
    const entries = (await scripts.run('readRunEvents', [keys.runEventSeqs(tenant, runId), keys.tenantEvents(tenant)], [since, limit])) as StreamEntry[];
    return eventsOf(tenant, entries);
  }

  async lastSeq(tenant: string): Promise<number> {
    return Number((await this.ctx.redis.get(this.ctx.keys.seq(tenant))) ?? 0);
  }
}

function eventsOf(tenant: string, entries: StreamEntry[]): ParleyEvent[] {
  return entries.flatMap((entry) => eventFromEntry(tenant, entry) ?? []);
}
