import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { Interaction, ParleyEvent } from '@parley/contracts';
import { EventFeed } from '../events/event.feed';

/** Open interactions kept at most; the oldest go first (an answer to one of them reads Redis). */
export const OPEN_INTERACTION_CACHE_SIZE = 10_000;

/**
 * Open interactions as `interaction.opened` announced them, so that an answer skips reading the
 * interaction back from Redis. Only what never changes is taken from here (run, owner, prompt,
 * deadline): whether it is still open or claimed is decided by the resolve step itself, which
 * answers a conflict or a claim as a read would have. Every gateway sees every published event, so the
 * gateway a client learned of a question from holds it when the client answers.
 */
@Injectable()
export class OpenInteractionCache implements OnModuleDestroy {
  private readonly open = new Map<string, Interaction>();
  private readonly unsubscribe: () => void;

  constructor(feed: EventFeed) {
    // Every tenant's, sockets here or not (an approval is often answered over HTTP); a missed event
    // leaves at worst a stale entry, which the resolve step corrects.
    this.unsubscribe = feed.onPublished((event) => this.observe(event));
  }

  onModuleDestroy(): void {
    this.unsubscribe();
    this.open.clear();
  }

  get(tenant: string, interactionId: string): Interaction | undefined {
    return this.open.get(keyOf(tenant, interactionId));
  }

  get size(): number {
    return this.open.size;
  }

  observe(event: ParleyEvent): void {
    if (event.type === 'interaction.opened') {
      const { interaction } = event.data;
      this.open.set(keyOf(event.tenant, interaction.id), interaction);
      if (this.open.size > OPEN_INTERACTION_CACHE_SIZE) {
        this.open.delete(this.open.keys().next().value as string);
      }
    } else if (event.type === 'interaction.resolved') {
      this.open.delete(keyOf(event.tenant, event.data.interactionId));
    }
  }
}

const keyOf = (tenant: string, interactionId: string) => `${tenant}/${interactionId}`;
