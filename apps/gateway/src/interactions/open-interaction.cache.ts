import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { Interaction, ParleyEvent } from '@parley/contracts';
import { EventFeed } from '../events/event.feed';

/** Open interactions kept at most; the oldest go first (an answer to one of them reads Redis). */
export const OPEN_INTERACTION_CACHE_SIZE = 10_000;

/** JSON bytes of all cached interactions together, at most; past it the oldest go first. */
export const OPEN_INTERACTION_CACHE_BYTES = 64 * 1024 * 1024;

/**
 * An interaction whose JSON is larger is never cached: a document to edit or a tool call carrying
 * a whole file is answered seldom enough that reading it from Redis costs less than holding it.
 */
export const OPEN_INTERACTION_ENTRY_BYTES = 32 * 1024;

/** An open interaction as announced, and the run's wake counter as it parked, when published with it. */
export interface SeenOpen {
  interaction: Interaction;
  parkedWake?: number;
}

interface Cached {
  seen: SeenOpen;
  bytes: number;
}

/**
 * Open interactions as `interaction.opened` announced them, so that an answer skips reading the
 * interaction back from Redis. Only what never changes is taken from here (run, owner, prompt,
 * deadline): whether it is still open or claimed is decided by the resolve step itself, which
 * answers a conflict or a claim as a read would have. Every gateway sees every published event, so the
 * gateway a client learned of a question from holds it when the client answers. Every tenant's
 * interactions share the bounds (count and bytes), so one gateway's memory for them stays bounded.
 */
@Injectable()
export class OpenInteractionCache implements OnModuleDestroy {
  private readonly open = new Map<string, Cached>();
  private totalBytes = 0;
  private readonly unsubscribe: () => void;

  constructor(feed: EventFeed) {
    // Every tenant's, sockets here or not (an approval is often answered over HTTP); a missed event
    // leaves at worst a stale entry, which the resolve step corrects.
    this.unsubscribe = feed.onPublished((event, parkedWake) => this.observe(event, parkedWake));
  }

  onModuleDestroy(): void {
    this.unsubscribe();
    this.open.clear();
    this.totalBytes = 0;
  }

  get(tenant: string, interactionId: string): SeenOpen | undefined {
    return this.open.get(keyOf(tenant, interactionId))?.seen;
  }

  get size(): number {
    return this.open.size;
  }

  /** The JSON bytes of what is cached. */
  get bytes(): number {
    return this.totalBytes;
  }

  observe(event: ParleyEvent, parkedWake?: number): void {
    if (event.type === 'interaction.opened') {
      this.add(event.tenant, event.data.interaction, parkedWake);
    } else if (event.type === 'interaction.resolved') {
      this.remove(keyOf(event.tenant, event.data.interactionId));
    }
  }

  private add(tenant: string, interaction: Interaction, parkedWake: number | undefined): void {
    const key = keyOf(tenant, interaction.id);
    this.remove(key);
    const bytes = Buffer.byteLength(JSON.stringify(interaction));
    if (bytes > OPEN_INTERACTION_ENTRY_BYTES) {
      return;
    }
    this.open.set(key, { seen: parkedWake === undefined ? { interaction } : { interaction, parkedWake }, bytes });
    this.totalBytes += bytes;
    while (this.open.size > OPEN_INTERACTION_CACHE_SIZE || this.totalBytes > OPEN_INTERACTION_CACHE_BYTES) {
      this.remove(this.open.keys().next().value as string);
    }
  }

  private remove(key: string): void {
    const cached = this.open.get(key);
    if (cached) {
      this.open.delete(key);
      this.totalBytes -= cached.bytes;
    }
  }
}

const keyOf = (tenant: string, interactionId: string) => `${tenant}/${interactionId}`;
