import type { ParleyEvent } from '@parley/contracts';
import type { StoreContext } from './store.context';

/** Reads events back from the streams; stream ids are `0-<seq>`, so `since` is a plain seq. */
export class EventRepository {
  constructor(private readonly ctx: StoreContext) {}

  readTenant(tenant: string, since: number, limit: number): Promise<ParleyEvent[]> {
    return this.read(this.ctx.keys.tenantEvents(tenant), since, limit);
  }

  readRun(tenant: string, runId: string, since: number, limit: number): Promise<ParleyEvent[]> {
    return this.read(this.ctx.keys.runEvents(tenant, runId), since, limit);
  }

  async lastSeq(tenant: string): Promise<number> {
    return Number((await this.ctx.redis.get(this.ctx.keys.seq(tenant))) ?? 0);
  }

  private async read(key: string, since: number, limit: number): Promise<ParleyEvent[]> {
    const entries = await this.ctx.redis.xrange(key, `(0-${since}`, '+', 'COUNT', limit);
    return entries.map(([, fields]) => JSON.parse(fields[1]) as ParleyEvent);
  }
}
