import type { ChainableCommander } from 'ioredis';
import type { RedisClient } from '@parley/platform';
import type { EventDraft } from '@parley/contracts';
import { RedisKeys } from './keys';
import { RedisClock } from './redis-clock';
import { Scripts } from './scripts';

export interface StoreOptions {
  prefix: string;
  eventsMaxLen: number;
  retentionSecs: number;
  leaseMs: number;
  /** Redis Cluster layout (tagged BullMQ prefix). */
  cluster?: boolean;
}

/** The resources every repository shares: one client, the key layout, the scripts, the limits. */
export class StoreContext {
  readonly keys: RedisKeys;
  readonly scripts: Scripts;
  /** Redis's clock as this process reads it: what deadlines are filed and judged on. */
  readonly clock: RedisClock;
  private readonly knownTenants = new Set<string>();

  constructor(
    readonly redis: RedisClient,
    readonly options: StoreOptions,
  ) {
    this.keys = new RedisKeys(options.prefix, { cluster: options.cluster });
    this.scripts = new Scripts(redis);
    this.clock = new RedisClock(redis);
    // A Redis that came back (a restart from an AOF that lost its last second, a failover) may have
    // lost a tenant noted just before: note each again, or the sweeper would never visit it.
    redis.on('ready', () => this.knownTenants.clear());
  }

  /** Records the tenant in the deployment's tenant set, once per process (per connection to Redis). */
  async noteTenant(tenant: string): Promise<void> {
    if (!this.knownTenants.has(tenant)) {
      await this.redis.sadd(this.keys.tenants(), tenant);
      this.knownTenants.add(tenant);
    }
  }

  /** KEYS[1..3] and ARGV[1..7] shared by every event-emitting script (see includes/emit.lua). */
  /**
   * `now` defaults to this process's reading of Redis's clock: an event's time, a run's `updatedAt`, the
   * scores of in-flight runs and the claims on approvals are then on the clock every process reads.
   */
  prologue(tenant: string, runId: string, owner: string, now = this.clock.now()): { keys: string[]; args: string[] } {
    return {
      keys: [this.keys.seq(tenant), this.keys.tenantEvents(tenant), this.keys.runEventSeqs(tenant, runId)],
      args: [tenant, runId, owner, now.toISOString(), String(this.options.eventsMaxLen), this.keys.eventsChannel(), String(now.getTime())],
    };
  }
}

export function eventArgs(events: EventDraft[]): string[] {
  return events.flatMap((event) => [event.type, JSON.stringify(event.data)]);
}

/** The replies of a MULTI (reads taken in one step), or the first error one of them got. */
export async function transactionReplies(multi: ChainableCommander): Promise<unknown[]> {
  const replies = (await multi.exec()) ?? [];
  const failure = replies.find(([error]) => error)?.[0];
  if (failure) {
    throw failure;
  }
  return replies.map(([, reply]) => reply);
}
