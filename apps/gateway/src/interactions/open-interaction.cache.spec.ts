import type { Interaction, ParleyEvent } from '@parley/contracts';
import type { EventFeed } from '../events/event.feed';
import { OPEN_INTERACTION_CACHE_SIZE, OpenInteractionCache } from './open-interaction.cache';

function interaction(id: string): Interaction {
  return {
    id,
    tenant: 'acme',
    runId: 'run-1',
    owner: 'alice',
    agent: 'demo',
    waitReason: 'question',
    prompt: { kind: 'free_text', prompt: 'Why?' },
    status: 'open',
    createdAt: '2026-11-29T21:00:00.000Z',
    deadline: null,
  };
}

const base = { tenant: 'acme', runId: 'run-1', owner: 'alice', at: '2026-11-29T21:00:00.000Z' };
const opened = (seq: number, id: string, tenant = 'acme'): ParleyEvent => ({ ...base, tenant, seq, type: 'interaction.opened', data: { interaction: { ...interaction(id), tenant } } });
const resolved = (seq: number, id: string): ParleyEvent => ({
  ...base,
  seq,
  type: 'interaction.resolved',
  data: { interactionId: id, outcome: 'answered', by: { kind: 'user', subject: 'alice', role: 'member' }, at: base.at },
});

describe('OpenInteractionCache', () => {
  function cacheFed(): { cache: OpenInteractionCache; feed: (event: ParleyEvent) => void } {
    const listeners: Array<(event: ParleyEvent) => void> = [];
    const feed = { onPublished: (listener: (event: ParleyEvent) => void) => (listeners.push(listener), () => listeners.splice(listeners.indexOf(listener), 1)) };
    const cache = new OpenInteractionCache(feed as unknown as EventFeed);
    return { cache, feed: (event) => listeners.forEach((l) => l(event)) };
  }

  it('holds an interaction from its opening to its resolution, per tenant', () => {
    const { cache, feed } = cacheFed();
    feed(opened(1, 'ix-1'));
    feed(opened(2, 'ix-1', 'globex'));
    expect(cache.get('acme', 'ix-1')).toEqual(interaction('ix-1'));
    expect(cache.get('globex', 'ix-1')?.tenant).toBe('globex');
    expect(cache.get('acme', 'ix-2')).toBeUndefined();
    feed(resolved(3, 'ix-1'));
    expect(cache.get('acme', 'ix-1')).toBeUndefined();
    expect(cache.get('globex', 'ix-1')).toBeDefined();
  });

  it('keeps at most OPEN_INTERACTION_CACHE_SIZE, dropping the oldest', () => {
    const { cache, feed } = cacheFed();
    for (let i = 0; i <= OPEN_INTERACTION_CACHE_SIZE; i++) {
      feed(opened(i + 1, `ix-${i}`));
    }
    expect(cache.size).toBe(OPEN_INTERACTION_CACHE_SIZE);
    expect(cache.get('acme', 'ix-0')).toBeUndefined();
    expect(cache.get('acme', `ix-${OPEN_INTERACTION_CACHE_SIZE}`)).toBeDefined();
  });

  it('stops listening when the module is destroyed', () => {
    const { cache, feed } = cacheFed();
    cache.onModuleDestroy();
    feed(opened(1, 'ix-1'));
    expect(cache.get('acme', 'ix-1')).toBeUndefined();
  });
});
