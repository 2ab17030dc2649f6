import type { ParleyEvent } from '@parley/contracts';
import type { StoreContext } from './store.context';

/** Reads events back from the streams; stream ids are `0-<seq>`, so `since` is a plain seq. */
export class EventRepository {
  constructor(private readonly ctx: StoreContext) {}

  readTenant(tenant: string, since: number, limit: number): Promise<ParleyEvent[]> {
    return this.read(this.ctx.keys.tenantEvents(tenant), since, limit);
  }

  /** The run's events still in the tenant stream (the run keeps only their seqs). */
  async readRun(tenant: string, runId: string, since: number, limit: number): Promise<ParleyEvent[]> {
    const { keys, scripts } = this.ctx;
    const events = (await scripts.run('readRunEvents', [keys.runEventSeqs(tenant, runId), keys.tenantEvents(tenant)], [since, limit])) as string[];
    return events.map((json) => JSON.parse(json) as ParleyEvent);
  }

  async lastSeq(tenant: string): Promise<number> {
    return Number((await this.ctx.redis.get(this.ctx.keys.seq(tenant))) ?? 0);
  }

  private async read(key: string, since: number, limit: number): Promise<ParleyEvent[]> {
    const entries = await this.ctx.redis.xrange(key, `(0-${since}`, '+', 'COUNT', limit);
    return entries.map(([, fields]) => JSON.parse(fields[1]) as ParleyEvent);
  }
}
