import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { ParleyEvent, PublishedMessage } from '@parley/contracts';
import { createRedis, type ParleyConfig, type RedisClient } from '@parley/platform';
import { PARLEY_CONFIG, ParleyStore, closeBoundOver, settlesWithin } from '@parley/store';

type Listener = (event: ParleyEvent) => void;
/** `parkedWake`: the `wake` an `interaction.opened` was published with (see the contracts' PublishedEvent). */
type PublishedListener = (event: ParleyEvent, parkedWake: number | undefined) => void;

interface TenantFeed {
  lastSeq: number;
  /** The tenant's steps, one at a time. */
  chain: Promise<void>;
  /** A catch-up scheduled after a step failed (a read from Redis), and how many failed in a row. */
  retry?: NodeJS.Timeout;
  failures: number;
}

/** A failed catch-up is tried again after this, doubled per failure in a row, up to RETRY_MAX_MS. */
const RETRY_MS = 250;
const RETRY_MAX_MS = 10_000;

/**
 * Live events of the tenants this gateway's sockets subscribed to, in order and without gaps. Redis
 * pub/sub carries them (every tenant's, on one channel); pub/sub may drop messages while this
 * gateway is disconnected, so what a message shows was missed (its tenant's previous seq, which it
 * names, was not handed on here), or a reconnect, is filled from the tenant's stream before
 * anything newer is handed on. A fill that fails is tried again.
 */
@Injectable()
export class EventFeed implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(EventFeed.name);
  private readonly subscriber: RedisClient;
  private readonly listeners = new Set<Listener>();
  private readonly published = new Set<PublishedListener>();
  private readonly tenants = new Map<string, TenantFeed>();
  private connectedOnce = false;
  private closed = false;

  constructor(
    @Inject(PARLEY_CONFIG) config: ParleyConfig,
    private readonly store: ParleyStore,
  ) {
    this.subscriber = createRedis(config, 'blocking', { enableAutoPipelining: false, purpose: 'event feed' });
  }

  async onModuleInit(): Promise<void> {
    this.subscriber.on('message', (_channel: string, message: string) => this.onMessage(message));
    this.subscriber.on('ready', () => {
      if (this.connectedOnce) {
        this.catchUpAll();
      }
      this.connectedOnce = true;
    });
    await this.subscriber.subscribe(this.store.ctx.keys.eventsChannel());
  }

  async onModuleDestroy(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    this.published.clear();
    this.tenants.forEach((state) => clearTimeout(state.retry));
    this.tenants.clear();
    await settlesWithin(this.subscriber.quit(), closeBoundOver(this.subscriber));
    // After a QUIT that failed or hangs (and a no-op after one that went through).
    this.subscriber.disconnect();
  }

  /** Events of the tracked tenants, in order, without gaps, each once. */
  onEvent(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Every tenant's events as published, in order, but with no gap filled (a disconnect loses some). */
  onPublished(listener: PublishedListener): () => void {
    this.published.add(listener);
    return () => this.published.delete(listener);
  }

  /** Starts tracking a tenant from `seq` (its current last sequence number) if not tracked yet. */
  track(tenant: string, seq: number): void {
    if (!this.tenants.has(tenant)) {
      this.tenants.set(tenant, { lastSeq: seq, chain: Promise.resolve(), failures: 0 });
    }
  }

  /**
   * No socket here wants the tenant's events any more: it stops being tracked once its queued steps
   * are done, unless `unwanted` says otherwise by then (a socket of the tenant came meanwhile).
   */
  untrack(tenant: string, unwanted: () => boolean): void {
    const state = this.tenants.get(tenant);
    if (!state) {
      return;
    }
    this.enqueue(tenant, () => {
      if (unwanted() && this.tenants.get(tenant) === state) {
        clearTimeout(state.retry);
        this.tenants.delete(tenant);
      }
    });
  }

  /** How many tenants are tracked. */
  get tracked(): number {
    return this.tenants.size;
  }

  private onMessage(message: string): void {
    let parsed: PublishedMessage;
    try {
      parsed = JSON.parse(message) as PublishedMessage;
    } catch {
      this.logger.warn('ignored a malformed event message');
      return;
    }
    // One script's events (one tenant's, as the scripts write them; grouped anyway), in seq order.
    const byTenant = new Map<string, Array<{ event: ParleyEvent; prev?: number }>>();
    for (const published of Array.isArray(parsed) ? parsed : [parsed]) {
      const { prev, wake, ...event } = published;
      this.published.forEach((listener) => listener(event, wake));
      const batch = byTenant.get(event.tenant);
      if (batch) {
        batch.push({ event, prev });
      } else {
        byTenant.set(event.tenant, [{ event, prev }]);
      }
    }
    // Tenants no socket here subscribed to are not followed: a later subscribe replays from the stream.
    byTenant.forEach((batch, tenant) =>
      this.enqueue(tenant, async (state) => {
        for (const { event, prev } of batch) {
          // Seqs are not consecutive: each event names the tenant's seq before it (one published by
          // an older release, whose seqs were, does not).
          if ((prev ?? event.seq - 1) > state.lastSeq) {
            await this.fill(tenant, state, event.seq - 1);
          }
          this.deliver(state, event);
        }
      }),
    );
  }

  private catchUpAll(): void {
    for (const tenant of this.tenants.keys()) {
      this.catchUp(tenant);
    }
  }

  /** Delivers what the tenant's stream holds past the last event handed on. */
  private catchUp(tenant: string): void {
    this.enqueue(tenant, (state) => this.fill(tenant, state, Number.MAX_SAFE_INTEGER));
  }

  private async fill(tenant: string, state: TenantFeed, upTo: number): Promise<void> {
    for (;;) {
      const after = state.lastSeq;
      const { events: missed, truncated } = await this.store.events.replayTenant(tenant, after, 500);
      if (truncated) {
        // Away longer than the stream keeps events: its sockets never get those (a resubscribe is told).
        this.logger.warn(`events of ${tenant} after #${after} were trimmed from the stream before this gateway could hand them on`);
      }
      const wanted = missed.filter((e) => e.seq <= upTo);
      wanted.forEach((e) => this.deliver(state, e));
      if (missed.length < 500 || wanted.length < missed.length) {
        return;
      }
    }
  }

  private deliver(state: TenantFeed, event: ParleyEvent): void {
    if (event.seq <= state.lastSeq) {
      return;
    }
    state.lastSeq = event.seq;
    for (const listener of this.listeners) {
      listener(event);
    }
  }

  /**
   * Per tenant, one step at a time, so a slow gap fill never lets a newer event overtake it. A step
   * that fails (a read of the stream) leaves events undelivered, the one that revealed the gap
   * included: a catch-up to the stream's end is scheduled, with a growing pause while failures go on.
   */
  private enqueue(tenant: string, step: (state: TenantFeed) => Promise<void> | void): void {
    const state = this.tenants.get(tenant);
    if (!state) {
      return;
    }
    state.chain = state.chain
      .then(() => step(state))
      .then(
        () => void (state.failures = 0),
        (error: unknown) => {
          state.failures++;
          this.logger.error(`event feed for ${tenant} (failure ${state.failures} in a row, caught up again later): ${(error as Error).message}`);
          this.catchUpLater(tenant, state);
        },
      );
  }

  private catchUpLater(tenant: string, state: TenantFeed): void {
    if (state.retry || this.closed) {
      return;
    }
    const delay = Math.min(RETRY_MAX_MS, RETRY_MS * 2 ** (state.failures - 1));
    state.retry = setTimeout(() => {
      state.retry = undefined;
      this.catchUp(tenant);
    }, delay);
    state.retry.unref();
  }
}
