import type { StoreContext } from '../store.context';
import { WEBHOOK_GROUP } from './webhook.repository';

/** Control messages kept: a dispatcher only needs the ones since it started reading. */
const CONTROL_MAXLEN = 1000;

/**
 * Which tenants the webhook dispatchers read: a deployment-wide set, and a small control stream
 * whose entries wake a dispatcher's blocked read when a tenant's endpoints change.
 */
export class WebhookSubscriptions {
  constructor(private readonly ctx: StoreContext) {}

  /** After an endpoint was created or changed: the tenant is read, and the dispatchers refresh now. */
  async announce(tenant: string): Promise<void> {
    const k = this.ctx.keys;
    await this.ctx.redis.sadd(k.webhookTenants(), tenant);
    await this.ctx.redis.xadd(k.webhookControl(), 'MAXLEN', '~', CONTROL_MAXLEN, '*', 't', tenant);
  }

  /** A group that vanished (the stream was deleted by hand): started again at the stream's end. */
  async createGroup(tenant: string): Promise<void> {
    await this.ctx.redis.xgroup('CREATE', this.ctx.keys.tenantEvents(tenant), WEBHOOK_GROUP, '$', 'MKSTREAM').catch(() => undefined);
  }

  /** Removes from the tenant's group the consumers other than `keep` with nothing pending that have not read for `deadMs`. */
  async dropDeadConsumers(tenant: string, keep: string, deadMs: number): Promise<void> {
    const stream = this.ctx.keys.tenantEvents(tenant);
    const consumers = (await this.ctx.redis.xinfo('CONSUMERS', stream, WEBHOOK_GROUP)) as unknown[][];
    for (const flat of consumers) {
      const info = new Map<string, unknown>();
      for (let i = 0; i + 1 < flat.length; i += 2) {
        info.set(String(flat[i]), flat[i + 1]);
      }
      const idle = Number(info.get('inactive') ?? info.get('idle') ?? 0);
      if (info.get('name') !== keep && Number(info.get('pending')) === 0 && idle > deadMs) {
        await this.ctx.redis.xgroup('DELCONSUMER', stream, WEBHOOK_GROUP, String(info.get('name')));
      }
    }
  }

  async tenants(): Promise<string[]> {
    return this.ctx.redis.smembers(this.ctx.keys.webhookTenants());
  }

  /** The id of the newest control entry ("0-0" when none): a dispatcher reads from there. */
  async controlTail(): Promise<string> {
    const last = await this.ctx.redis.xrevrange(this.ctx.keys.webhookControl(), '+', '-', 'COUNT', 1);
    return last[0]?.[0] ?? '0-0';
  }

  /**
   * Drops a tenant that has no endpoint left. The tenant set and the tenant's endpoints are in
   * different cluster slots, so no transaction covers both: the tenant is removed first and the
   * endpoints are counted after. An endpoint created before that count puts the tenant back here;
   * one created after it is announced after the removal, and its announce adds the tenant again.
   */
  async pruneIfEmpty(tenant: string): Promise<boolean> {
    const k = this.ctx.keys;
    if ((await this.ctx.redis.hlen(k.webhooks(tenant))) > 0 || (await this.ctx.redis.srem(k.webhookTenants(), tenant)) === 0) {
      return false;
    }
    if ((await this.ctx.redis.hlen(k.webhooks(tenant))) > 0) {
      await this.announce(tenant);
      return false;
    }
    return true;
  }
}
