import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { ParleyEvent } from '@parley/contracts';
import { createRedis, type ParleyConfig, type RedisClient } from '@parley/platform';
import { CLOSE_BOUND_MS, PARLEY_CONFIG, ParleyStore, settlesWithin } from '@parley/store';

type Listener = (event: ParleyEvent) => void;

/**
 * Live events of every tenant, in order and without gaps. Redis pub/sub carries them; pub/sub may
 * drop messages while this gateway is disconnected, so a gap in a tenant's sequence numbers (or a
 * reconnect) is filled from the tenant's stream before anything newer is handed on.
 */
@Injectable()
export class EventFeed implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(EventFeed.name);
  private readonly subscriber: RedisClient;
  private readonly listeners = new Set<Listener>();
  private readonly tenants = new Map<string, { lastSeq: number; chain: Promise<void> }>();
  private connectedOnce = false;

  constructor(
    @Inject(PARLEY_CONFIG) config: ParleyConfig,
    private readonly store: ParleyStore,
  ) {
    this.subscriber = createRedis(config, 'blocking', { enableAutoPipelining: false });
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
    this.listeners.clear();
    await settlesWithin(this.subscriber.quit(), CLOSE_BOUND_MS);
    // After a QUIT that failed or hangs (and a no-op after one that went through).
    this.subscriber.disconnect();
  }

  onEvent(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Starts tracking a tenant from `seq` (its current last sequence number) if not tracked yet. */
  track(tenant: string, seq: number): void {
    if (!this.tenants.has(tenant)) {
      this.tenants.set(tenant, { lastSeq: seq, chain: Promise.resolve() });
    }
  }

  private onMessage(message: string): void {
    let event: ParleyEvent;
    try {
      event = JSON.parse(message) as ParleyEvent;
    } catch {
      this.logger.warn('ignored a malformed event message');
      return;
    }
    this.track(event.tenant, event.seq - 1);
    this.enqueue(event.tenant, async (state) => {
      if (event.seq > state.lastSeq + 1) {
        await this.fill(event.tenant, state, event.seq - 1);
      }
      this.deliver(state, event);
    });
  }

  private catchUpAll(): void {
    for (const tenant of this.tenants.keys()) {
      this.enqueue(tenant, (state) => this.fill(tenant, state, Number.MAX_SAFE_INTEGER));
    }
  }

  private async fill(tenant: string, state: { lastSeq: number }, upTo: number): Promise<void> {
    for (;;) {
      const missed = await this.store.events.readTenant(tenant, state.lastSeq, 500);
      const wanted = missed.filter((e) => e.seq <= upTo);
      wanted.forEach((e) => this.deliver(state, e));
      if (missed.length < 500 || wanted.length < missed.length) {
        return;
      }
    }
  }

  private deliver(state: { lastSeq: number }, event: ParleyEvent): void {
    if (event.seq <= state.lastSeq) {
      return;
    }
    state.lastSeq = event.seq;
    for (const listener of this.listeners) {
      listener(event);
    }
  }

  /** Per tenant, one step at a time, so a slow gap fill never lets a newer event overtake it. */
  private enqueue(tenant: string, step: (state: { lastSeq: number }) => Promise<void> | void): void {
    const state = this.tenants.get(tenant);
    if (!state) {
      return;
    }
    state.chain = state.chain
      .then(() => step(state))
      .catch((error: unknown) => this.logger.error(`event feed for ${tenant}: ${(error as Error).message}`));
  }
}
