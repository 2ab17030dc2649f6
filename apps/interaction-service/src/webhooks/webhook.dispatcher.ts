import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Redis } from 'ioredis';
import type { ParleyEvent } from '@parley/contracts';
import { createRedis, type ParleyConfig } from '@parley/platform';
import { PARLEY_CONFIG, ParleyStore, WEBHOOK_GROUP, WebhookStore } from '@parley/store';
import { WebhookRouter } from './webhook.router';

type Entry = [id: string, fields: string[] | null];
type StreamReply = Array<[key: string, entries: Entry[]]>;

const BATCH = 100;
/** Upper bound of one blocking read; a change of tenants interrupts it earlier (CLIENT UNBLOCK). */
const BLOCK_MS = 30_000;
/** A consumer that has nothing pending and has not read for this long is removed from the group. */
const DEAD_CONSUMER_MS = 3600_000;

/**
 * Reads the event streams of the tenants that have webhook endpoints, as one consumer of a group
 * shared by every interaction-service, so each event is routed once. One blocking XREADGROUP covers
 * all those tenants; tenants without endpoints are not read at all. A second connection blocks on
 * the control stream: when an endpoint is created or changed it refreshes the tenant list and
 * unblocks the read. Entries are acknowledged only after their delivery jobs are queued; entries a
 * dead process left unacknowledged are taken over (XAUTOCLAIM) at start and then periodically.
 */
@Injectable()
export class WebhookDispatcher implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(WebhookDispatcher.name);
  readonly consumer = `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
  private reader?: Redis;
  private control?: Redis;
  private tenants: string[] = [];
  private stopped = false;
  /** Bumped by every pass of the read loop, so an unblock knows its read was interrupted. */
  private pass = 0;
  private changed = false;
  private readerClientId?: number;
  private wake?: () => void;
  private timer?: NodeJS.Timeout;
  private readonly loops: Array<Promise<void>> = [];
  private housekeeping?: Promise<void>;

  constructor(
    @Inject(PARLEY_CONFIG) private readonly config: ParleyConfig,
    private readonly store: ParleyStore,
    private readonly webhooks: WebhookStore,
    private readonly router: WebhookRouter,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.reader = createRedis(this.config.redisUrl, 'blocking');
    this.control = createRedis(this.config.redisUrl, 'blocking');
    // The control tail first, then the tenant list: a change in between is seen by the control loop.
    const tail = await this.webhooks.subscriptions.controlTail();
    this.tenants = await this.webhooks.subscriptions.tenants();
    this.loops.push(this.readLoop(), this.controlLoop(tail));
    this.startHousekeeping();
    this.timer = setInterval(() => this.startHousekeeping(), this.config.webhookClaimIdleMs);
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.wake?.();
    this.reader?.disconnect();
    this.control?.disconnect();
    await Promise.allSettled([...this.loops, this.housekeeping]);
  }

  private async readLoop(): Promise<void> {
    while (!this.stopped) {
      this.pass++;
      this.changed = false;
      if (this.tenants.length === 0) {
        await new Promise<void>((resolve) => {
          this.wake = resolve;
          if (this.changed || this.stopped) {
            resolve();
          }
        });
        this.wake = undefined;
        continue;
      }
      const tenants = this.tenants;
      const streams = tenants.map((tenant) => this.store.ctx.keys.tenantEvents(tenant));
      try {
        // Asked on every pass: a reconnect gives the connection a new id.
        const reader = this.reader!;
        this.readerClientId = Number(await reader.client('ID'));
        const reply = await reader.xreadgroup(
          'GROUP',
          WEBHOOK_GROUP,
          this.consumer,
          'COUNT',
          BATCH,
          'BLOCK',
          BLOCK_MS,
          'STREAMS',
          ...streams,
          ...streams.map(() => '>'),
        );
        for (const [stream, entries] of reply ?? []) {
          await this.handle(tenants[streams.indexOf(stream)], stream, entries);
        }
      } catch (error) {
        if (this.stopped) {
          return;
        }
        if (String(error).includes('NOGROUP')) {
          await this.createMissingGroups(tenants);
        } else {
          this.logger.warn(`reading event streams: ${String(error)}`);
          await this.pause(1000);
        }
      }
    }
  }

  private async controlLoop(from: string): Promise<void> {
    let last = from;
    while (!this.stopped) {
      try {
        const reply = (await this.control!.xread('COUNT', BATCH, 'BLOCK', BLOCK_MS, 'STREAMS', this.store.ctx.keys.webhookControl(), last)) as StreamReply | null;
        const entries = reply?.[0]?.[1] ?? [];
        if (entries.length > 0) {
          last = entries[entries.length - 1][0];
          await this.refresh();
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

  /** Reloads the tenant list; if it changed, interrupts the blocked read so the next one covers the new list. */
  private async refresh(): Promise<void> {
    const tenants = (await this.webhooks.subscriptions.tenants()).sort();
    if (tenants.join('\n') === [...this.tenants].sort().join('\n')) {
      return;
    }
    this.tenants = tenants;
    this.changed = true;
    this.wake?.();
    await this.interruptRead();
  }

  /**
   * CLIENT UNBLOCK only reaches a read that is already blocked: one sent just before the read
   * arrives is lost, so it is repeated until the read loop has started a new pass.
   */
  private async interruptRead(): Promise<void> {
    const pass = this.pass;
    for (let i = 0; i < 50 && this.pass === pass && this.changed && !this.stopped; i++) {
      if (this.readerClientId !== undefined) {
        await this.store.ctx.redis.client('UNBLOCK', this.readerClientId);
      }
      await this.pause(20);
    }
  }

  /** Routes a batch of one tenant's entries and acknowledges the ones routed. */
  private async handle(tenant: string, stream: string, entries: Entry[]): Promise<void> {
    if (entries.length === 0) {
      return;
    }
    const endpoints = await this.webhooks.endpoints.list(tenant);
    const done: string[] = [];
    try {
      for (const [id, fields] of entries) {
        const json = fields?.[fields.indexOf('e') + 1];
        if (json) {
          await this.router.route(JSON.parse(json) as ParleyEvent, endpoints);
        }
        done.push(id);
      }
    } catch (error) {
      // Left pending: taken over once idle, by this process or another.
      this.logger.warn(`routing events of tenant ${tenant}: ${String(error)}`);
    } finally {
      if (done.length > 0) {
        await this.store.ctx.redis.xack(stream, WEBHOOK_GROUP, ...done);
      }
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
        await this.dropDeadConsumers(tenant);
      }
      await this.refresh();
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
          await this.createMissingGroups([tenant]);
          return;
        }
        throw error;
      }
      cursor = reply[0];
      await this.handle(
        tenant,
        stream,
        reply[1].filter(([, fields]) => fields !== null),
      );
    } while (cursor !== '0-0' && !this.stopped);
  }

  private async dropDeadConsumers(tenant: string): Promise<void> {
    const stream = this.store.ctx.keys.tenantEvents(tenant);
    const consumers = (await this.store.ctx.redis.xinfo('CONSUMERS', stream, WEBHOOK_GROUP)) as unknown[][];
    for (const flat of consumers) {
      const info = new Map<string, unknown>();
      for (let i = 0; i + 1 < flat.length; i += 2) {
        info.set(String(flat[i]), flat[i + 1]);
      }
      const idle = Number(info.get('inactive') ?? info.get('idle') ?? 0);
      if (info.get('name') !== this.consumer && Number(info.get('pending')) === 0 && idle > DEAD_CONSUMER_MS) {
        await this.store.ctx.redis.xgroup('DELCONSUMER', stream, WEBHOOK_GROUP, String(info.get('name')));
      }
    }
  }

  /** A group that vanished (the stream was deleted by hand): start it at the stream's end. */
  private async createMissingGroups(tenants: string[]): Promise<void> {
    for (const tenant of tenants) {
      await this.store.ctx.redis.xgroup('CREATE', this.store.ctx.keys.tenantEvents(tenant), WEBHOOK_GROUP, '$', 'MKSTREAM').catch(() => undefined);
    }
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms).unref());
  }
}
