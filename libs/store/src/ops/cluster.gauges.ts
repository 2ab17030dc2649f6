import type { Queue } from 'bullmq';
import type { ClusterGauges } from '@parley/platform';
import { hgetallEach } from '../many-keys';
import type { StoreContext } from '../store.context';

const JOB_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'failed', 'completed'] as const;

/**
 * Deployment-wide gauges for a scrape: one HGETALL per tenant (the counters the scripts keep),
 * never a walk over runs or interactions, so a scrape costs the same at 10 or 100,000 parked runs.
 */
export async function readClusterGauges(ctx: StoreContext, queues: readonly Queue[]): Promise<ClusterGauges> {
  const tenants = await ctx.redis.smembers(ctx.keys.tenants());
  const hashes = await hgetallEach(
    ctx.redis,
    tenants.map((tenant) => ctx.keys.gauges(tenant)),
  );
  let parkedRuns = 0;
  const openInteractions: Record<string, number> = {};
  for (const hash of hashes) {
    for (const [field, value] of Object.entries(hash)) {
      if (field === 'parked') {
        parkedRuns += Number(value);
      } else if (field.startsWith('open:')) {
        const kind = field.slice('open:'.length);
        openInteractions[kind] = (openInteractions[kind] ?? 0) + Number(value);
      }
    }
  }
  const counts = await Promise.all(queues.map((queue) => queue.getJobCounts(...JOB_STATES)));
  return {
    parkedRuns,
    openInteractions,
    queues: Object.fromEntries(queues.map((queue, i) => [queue.name, counts[i]])),
  };
}
