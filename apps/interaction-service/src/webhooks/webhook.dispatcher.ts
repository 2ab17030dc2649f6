import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { createRedis, type ParleyConfig, type RedisClient } from '@parley/platform';
import { PARLEY_CONFIG, ParleyStore, WEBHOOK_GROUP, WebhookStore, eventFromEntry } from '@parley/store';
import type { StoredWebhook } from '@parley/contracts';
import { EventChannelFollower } from './event-channel.follower';
import { tenantOfMessage } from './event-channel.message';
import { RouteFailures, type Entry } from './webhook.poison';
import { WebhookRouter } from './webhook.router';
type StreamReply = Array<[key: string, entries: Entry[]]>;

const BATCH = 100;
/** Upper bound of one blocking read of the control stream. */
const BLOCK_MS = 30_000;
/** A consumer that has nothing pending and has not read for this long is removed from the group. */
const DEAD_CONSUMER_MS = 3600_000;
/** How soon a tenant whose read or routing failed (not NOGROUP) is read again; doubled for each failed read of its pending entries. */
const RETRY_MS = 1000;
/**
 * Failed reads of the entries pending with this consumer before they are left to the idle takeover:
 * an entry that fails every time (not Redis being away) must not hold back the tenant's newer ones.
 */
const PENDING_TRIES = 4;

/**
 * Reads the event streams of the tenants that have webhook endpoints, as one consumer of a group
 * shared by every interaction-service, so each event is routed once. Nothing polls: while some
 * tenant has endpoints, the dispatcher listens on the deployment's event channel (each script
 * publishes its events there) and reads a tenant's stream (XREADGROUP, not blocking) when an event
 * of it went by; a tenant is marked due once however many events arrive meanwhile. One stream per
 * read, as a Redis Cluster requires (CROSSSLOT). Pub/sub can drop messages, so a (re)subscribe, a
 * tenant list change and every housekeeping pass read every tenant once. A second connection
 * blocks on the control stream, which announces endpoint changes. Entries are acknowledged once
 * their delivery jobs are queued; those read but not routed (Redis failed under it) are read again
 * a second later, before anything newer of that tenant, and those a dead process left are taken
 * over (XAUTOCLAIM) at start and then periodically.
 */
@Injectable()
export class WebhookDispatcher implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(WebhookDispatcher.name);
  private readonly failures: RouteFailures;
  readonly consumer = `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
  private subscriber?: RedisClient;
  private channel?: EventChannelFollower;
  private control?: RedisClient;
  private tenants = new Set<string>();
  /** Tenants whose streams may hold entries not read yet, oldest mark first. */
  private readonly due = new Set<string>();
  /**
   * Tenants that may have entries pending with this consumer, read but not routed (a read or a
   * routing failed, or the connection dropped): read those first. By failed reads of them so far.
   */
  private readonly stranded = new Map<string, number>();
  /** Tenants whose read failed, waiting for their retry: events of theirs meanwhile do not read them sooner. */
  private readonly backingOff = new Set<string>();
  private draining?: Promise<void>;
  private stopped = false;
  private started = false;
  private timer?: NodeJS.Timeout;
  private readonly retries = new Set<NodeJS.Timeout>();
  private followRetry?: NodeJS.Timeout;
  private housekeeping?: Promise<void>;

  constructor(
    @Inject(PARLEY_CONFIG) private readonly config: ParleyConfig,
    private readonly store: ParleyStore,
    private readonly webhooks: WebhookStore,
    private readonly router: WebhookRouter,
  ) {
    this.failures = new RouteFailures(config.webhookRouteTries, this.logger);
  }

  async onApplicationBootstrap(): Promise<void> {
    this.subscriber = createRedis(this.config, 'blocking', { enableAutoPipelining: false, purpose: 'webhook events' });
    this.control = createRedis(this.config, 'blocking', { purpose: 'webhook control' });
    this.subscriber.on('message', (_channel: string, message: string) => this.onEvent(message));
    this.subscriber.on('ready', this.onReconnect);
    // The connection the reads go over: a drop may have lost a read's reply, which ioredis sent again.
    this.store.ctx.redis.on('ready', this.onReconnect);
    this.channel = new EventChannelFollower(this.subscriber, this.store.ctx.keys.eventsChannel(), () => this.markAll());
    const { tail, tenants } = await this.firstRead();
    this.setTenants(tenants);
    this.started = true;
    void this.controlLoop(tail);
    this.startHousekeeping();
    this.timer = setInterval(() => this.startHousekeeping(), this.config.webhookClaimIdleMs);
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    this.store.ctx.redis.off('ready', this.onReconnect);
    clearInterval(this.timer);
    this.retries.forEach((retry) => clearTimeout(retry));
    clearTimeout(this.followRetry);
    this.subscriber?.disconnect();
    this.control?.disconnect();
    // Not the control loop: its blocked read on a connection that was away when disconnected never
    // settles (ioredis), and the loop writes nothing.
    await Promise.allSettled([this.housekeeping, this.draining]);
  }

  /** The control tail, then the tenant list (a change in between is seen by the control loop); Redis may be away as the process starts. */
  private async firstRead(): Promise<{ tail: string; tenants: string[] }> {
    for (;;) {
      try {
        const tail = await this.webhooks.subscriptions.controlTail();
        return { tail, tenants: await this.webhooks.subscriptions.tenants() };
      } catch (error) {
        if (this.stopped) {
          throw error;
        }
        this.logger.warn(`reading the webhook tenants at start, trying again in a second: ${String(error)}`);
        await this.pause(1000);
      }
    }
  }

  /** After a drop, what a read whose reply was lost took is pending with this consumer: read that first. */
  private readonly onReconnect = (): void => {
    if (this.started) {
      this.tenants.forEach((tenant) => this.stranded.set(tenant, this.stranded.get(tenant) ?? 0));
      this.markAll();
    }
  };

  private onEvent(message: string): void {
    const tenant = tenantOfMessage(message);
    if (tenant !== undefined && this.tenants.has(tenant)) {
      this.mark(tenant);
    }
  }

  private mark(tenant: string): void {
    this.due.add(tenant);
    this.kick();
  }

  private markAll(): void {
    this.tenants.forEach((tenant) => this.due.add(tenant));
    this.kick();
  }

  /** One drain at a time; a mark made while it runs is picked up by it, or by the next one. */
  private kick(): void {
    if (this.stopped || this.draining || this.due.size === 0) {
      return;
    }
    this.draining = this.drain().finally(() => {
      this.draining = undefined;
      this.kick();
    });
  }

  private async drain(): Promise<void> {
    while (!this.stopped && this.due.size > 0) {
      const tenant = this.due.values().next().value as string;
      this.due.delete(tenant);
      if (!this.tenants.has(tenant) || this.backingOff.has(tenant)) {
        continue;
      }
      try {
        if (await this.readTenant(tenant)) {
          // There may be more (a full batch, or new entries after the pending ones). Marked again, behind the tenants already due.
          this.due.add(tenant);
        }
      } catch (error) {
        if (this.stopped) {
          return;
        }
        if (String(error).includes('NOGROUP')) {
          await this.webhooks.subscriptions.createGroup(tenant);
        } else {
          this.logger.warn(`reading or routing the events of tenant ${tenant}: ${String(error)}`);
          this.retryLater(tenant);
        }
      }
    }
  }

  /**
   * Reads and routes one batch of the tenant's entries: after a failure, those pending with this
   * consumer first (id 0), else new ones; true when there may be more to read now.
   */
  private async readTenant(tenant: string): Promise<boolean> {
    const stream = this.store.ctx.keys.tenantEvents(tenant);
    const failures = this.stranded.get(tenant);
    let read: number;
    try {
      const reply: StreamReply | null = await this.store.ctx.redis.xreadgroup('GROUP', WEBHOOK_GROUP, this.consumer, 'COUNT', BATCH, 'STREAMS', stream, failures === undefined ? '>' : '0');
      const entries = reply?.[0]?.[1] ?? [];
      read = entries.length;
      await this.handle(tenant, stream, entries);
    } catch (error) {
      // What the read took stays pending with this consumer: the retry reads it again, before anything newer.
      this.strand(tenant, failures === undefined ? 0 : failures + 1);
      throw error;
    }
    const full = read >= BATCH;
    if (failures === undefined) {
      return full;
    }
    if (full) {
      this.stranded.set(tenant, 0);
    } else {
      this.stranded.delete(tenant);
    }
    return true;
  }

  /** Marks the tenant's pending entries to be read first; after PENDING_TRIES failed reads of them, leaves them to the idle takeover. */
  private strand(tenant: string, failures: number): void {
    if (failures < PENDING_TRIES) {
      this.stranded.set(tenant, failures);
      return;
    }
    this.stranded.delete(tenant);
    this.logger.error({ msg: 'webhook events of a tenant failed to route again and again: left to the takeover of idle entries', tenant, afterMs: this.config.webhookClaimIdleMs });
  }

  private retryLater(tenant: string): void {
    this.backingOff.add(tenant);
    const retry = setTimeout(() => {
      this.retries.delete(retry);
      this.backingOff.delete(tenant);
      this.mark(tenant);
    }, RETRY_MS * 2 ** (this.stranded.get(tenant) ?? 0));
    retry.unref();
    this.retries.add(retry);
  }

  /**
   * New tenants are read at once. The channel is followed (or left) in the background: a subscribe
   * waits while its connection is away, holding up nothing. Once one takes effect every tenant is
   * read again (what came before it was not announced); a failed one is retried by housekeeping.
   */
  private setTenants(tenants: string[]): void {
    const added = tenants.filter((tenant) => !this.tenants.has(tenant));
    this.tenants = new Set(tenants);
    this.followChannel();
    added.forEach((tenant) => this.due.add(tenant));
    this.kick();
  }

  /** `renew`: subscribe again even if following (a Redis Cluster's subscriber can lose it unnoticed). */
  private followChannel(renew = false): void {
    this.channel!.follow(this.tenants.size > 0, renew).catch((error: unknown) => {
      if (!this.stopped) {
        this.logger.warn(`following the event channel, trying again in a second: ${String(error)}`);
        this.followRetry ??= setTimeout(() => {
          this.followRetry = undefined;
          this.followChannel();
        }, RETRY_MS).unref();
      }
    });
  }

  private async controlLoop(from: string): Promise<void> {
    let last = from;
    while (!this.stopped) {
      try {
        const reply = (await this.control!.xread('COUNT', BATCH, 'BLOCK', BLOCK_MS, 'STREAMS', this.store.ctx.keys.webhookControl(), last)) as StreamReply | null;
        const entries = reply?.[0]?.[1] ?? [];
        if (entries.length > 0) {
          // Read on from there only once the refresh is done: one that failed is tried again.
          await this.refresh();
          last = entries[entries.length - 1][0];
        }
      } catch (error) {
        if (this.stopped) {
          return;
        }
        this.logger.warn(`reading the webhook control stream: ${String(error)}`);
        await this.pause(1000);
      }
    }
  }

  /** Reloads the tenant list; a tenant new to it is read at once. */
  private async refresh(): Promise<void> {
    this.setTenants(await this.webhooks.subscriptions.tenants());
  }

  /**
   * Routes a batch of one tenant's entries in order and acknowledges the ones routed; then throws the
   * first failure, if any. An entry that fails is left pending and the next one tried, so one that can
   * never be routed does not hold back the rest; two failures in a row stop the batch (Redis is away).
   * One that has failed PARLEY_WEBHOOK_ROUTE_TRIES times is given up: acknowledged too (RouteFailures).
   */
  private async handle(tenant: string, stream: string, entries: Entry[]): Promise<void> {
    if (entries.length === 0) {
      return;
    }
    const done: string[] = [];
    let failure: { error: unknown } | undefined;
    try {
      const endpoints = await this.webhooks.endpoints.list(tenant);
      let failedInARow = 0;
      for (const [id, fields] of entries) {
        try {
          await this.route(tenant, id, fields, endpoints);
          done.push(id);
          this.failures.routed(stream, id);
          failedInARow = 0;
        } catch (error) {
          if (this.failures.failed(tenant, stream, [id, fields], error)) {
            done.push(id);
          }
          failure ??= { error };
          if (++failedInARow === 2) {
            break;
          }
        }
      }
    } finally {
      if (done.length > 0) {
        await this.store.ctx.redis.xack(stream, WEBHOOK_GROUP, ...done);
      }
    }
    if (failure) {
      throw failure.error;
    }
  }

  private async route(tenant: string, id: string, fields: string[] | null, endpoints: StoredWebhook[]): Promise<void> {
    const event = eventFromEntry(tenant, [id, fields]);
    if (event) {
      await this.router.route(event, endpoints);
    } else if (fields === null) {
      // Read again after a failure, by then trimmed from the stream: nothing left to route.
      this.logger.warn({ msg: 'an event was trimmed from the stream before it could be routed to webhooks', tenant, entryId: id });
    } else {
      // Never routable, however often it is retried: acknowledged, so it cannot hold up the rest.
      this.logger.error({ msg: 'skipped an unreadable event stream entry', tenant, entryId: id });
    }
  }

  private startHousekeeping(): void {
    this.housekeeping ??= this.keepHouse().finally(() => (this.housekeeping = undefined));
  }

  /** Takes over entries idle past the claim time, drops tenants without endpoints and consumers long gone. */
  private async keepHouse(): Promise<void> {
    try {
      await this.refresh();
      for (const tenant of this.tenants) {
        if (this.stopped) {
          return;
        }
        if ((await this.webhooks.endpoints.count(tenant)) === 0 && (await this.webhooks.subscriptions.pruneIfEmpty(tenant))) {
          continue;
        }
        await this.claimIdle(tenant);
        await this.webhooks.subscriptions.dropDeadConsumers(tenant, this.consumer, DEAD_CONSUMER_MS);
      }
      await this.refresh();
      this.followChannel(true);
      // Safety net for a wake-up pub/sub dropped (e.g. a cluster node's failover under the subscriber).
      this.markAll();
    } catch (error) {
      if (!this.stopped) {
        this.logger.warn(`webhook housekeeping: ${String(error)}`);
      }
    }
  }

  private async claimIdle(tenant: string): Promise<void> {
    const stream = this.store.ctx.keys.tenantEvents(tenant);
    let cursor = '0-0';
    do {
      let reply: [string, Entry[], string[]?];
      try {
        reply = (await this.store.ctx.redis.xautoclaim(stream, WEBHOOK_GROUP, this.consumer, this.config.webhookClaimIdleMs, cursor, 'COUNT', BATCH)) as [string, Entry[], string[]?];
      } catch (error) {
        if (String(error).includes('NOGROUP')) {
          await this.webhooks.subscriptions.createGroup(tenant);
          return;
        }
        throw error;
      }
      cursor = reply[0];
      try {
        await this.handle(
          tenant,
          stream,
          reply[1].filter(([, fields]) => fields !== null),
        );
      } catch (error) {
        // Pending with this consumer now, idle again after the claim time: the next pass takes them.
        this.logger.warn(`routing the events of tenant ${tenant} taken over: ${String(error)}`);
        return;
      }
    } while (cursor !== '0-0' && !this.stopped);
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms).unref());
  }
}
