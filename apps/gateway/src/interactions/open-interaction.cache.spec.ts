import type { Interaction, ParleyEvent } from '@parley/contracts';
import type { EventFeed } from '../events/event.feed';
import { OPEN_INTERACTION_CACHE_BYTES, OPEN_INTERACTION_CACHE_SIZE, OPEN_INTERACTION_ENTRY_BYTES, OpenInteractionCache } from './open-interaction.cache';

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
/** An opened review whose interaction's JSON is exactly `bytes` long. */
function openedOfBytes(seq: number, id: string, bytes: number): ParleyEvent {
  const event = opened(seq, id) as Extract<ParleyEvent, { type: 'interaction.opened' }>;
  const withMarkdown = (markdown: string): Interaction => ({ ...event.data.interaction, prompt: { kind: 'review', prompt: 'Read this', markdown } });
  const overhead = JSON.stringify(withMarkdown('')).length;
  return { ...event, data: { interaction: withMarkdown('m'.repeat(bytes - overhead)) } };
}
const jsonBytes = (i: Interaction | undefined) => Buffer.byteLength(JSON.stringify(i));

const resolved = (seq: number, id: string): ParleyEvent => ({
  ...base,
  seq,
  type: 'interaction.resolved',
  data: { interactionId: id, outcome: 'answered', by: { kind: 'user', subject: 'alice', role: 'member' }, at: base.at },
});

describe('OpenInteractionCache', () => {
  function cacheFed(): { cache: OpenInteractionCache; feed: (event: ParleyEvent, parkedWake?: number) => void } {
    type Listener = (event: ParleyEvent, parkedWake?: number) => void;
    const listeners: Listener[] = [];
    const feed = { onPublished: (listener: Listener) => (listeners.push(listener), () => listeners.splice(listeners.indexOf(listener), 1)) };
    const cache = new OpenInteractionCache(feed as unknown as EventFeed);
    return { cache, feed: (event, parkedWake) => listeners.forEach((l) => l(event, parkedWake)) };
  }

  it('holds an interaction from its opening to its resolution, per tenant', () => {
    const { cache, feed } = cacheFed();
    feed(opened(1, 'ix-1'), 4);
    feed(opened(2, 'ix-1', 'globex'));
    expect(cache.get('acme', 'ix-1')).toEqual({ interaction: interaction('ix-1'), parkedWake: 4 });
    expect(cache.get('globex', 'ix-1')).toEqual({ interaction: { ...interaction('ix-1'), tenant: 'globex' } });
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

  it('keeps at most OPEN_INTERACTION_CACHE_BYTES of JSON, dropping the oldest', () => {
    const { cache, feed } = cacheFed();
    const entryBytes = OPEN_INTERACTION_ENTRY_BYTES;
    const fitting = Math.floor(OPEN_INTERACTION_CACHE_BYTES / entryBytes);
    for (let i = 0; i <= fitting; i++) {
      feed(openedOfBytes(i + 1, `ix-${i}`, entryBytes));
    }
    expect(cache.size).toBe(fitting);
    expect(cache.bytes).toBe(fitting * entryBytes);
    expect(cache.bytes).toBeLessThanOrEqual(OPEN_INTERACTION_CACHE_BYTES);
    expect(cache.get('acme', 'ix-0')).toBeUndefined();
    expect(cache.get('acme', `ix-${fitting}`)).toBeDefined();
  });

  it('does not cache an interaction over OPEN_INTERACTION_ENTRY_BYTES (its answer reads Redis), nor keep an older copy of it', () => {
    const { cache, feed } = cacheFed();
    feed(openedOfBytes(1, 'ix-small', OPEN_INTERACTION_ENTRY_BYTES));
    expect(jsonBytes(cache.get('acme', 'ix-small')?.interaction)).toBe(OPEN_INTERACTION_ENTRY_BYTES);
    feed(openedOfBytes(2, 'ix-big', OPEN_INTERACTION_ENTRY_BYTES + 1));
    expect(cache.get('acme', 'ix-big')).toBeUndefined();
    // The same interaction announced again, now too big: the copy cached before is dropped too.
    feed(openedOfBytes(3, 'ix-small', OPEN_INTERACTION_ENTRY_BYTES + 1));
    expect(cache.get('acme', 'ix-small')).toBeUndefined();
    expect({ size: cache.size, bytes: cache.bytes }).toEqual({ size: 0, bytes: 0 });
  });

  it('counts the bytes of what it holds: an entry announced twice once, a resolved one not at all', () => {
    const { cache, feed } = cacheFed();
    feed(opened(1, 'ix-1'));
    feed(opened(2, 'ix-1'));
    feed(opened(3, 'ix-2'));
    expect(cache.bytes).toBe(jsonBytes(cache.get('acme', 'ix-1')?.interaction) + jsonBytes(cache.get('acme', 'ix-2')?.interaction));
    feed(resolved(4, 'ix-1'));
    feed(resolved(5, 'ix-2'));
    expect({ size: cache.size, bytes: cache.bytes }).toEqual({ size: 0, bytes: 0 });
  });

  it('stops listening when the module is destroyed', () => {
    const { cache, feed } = cacheFed();
    cache.onModuleDestroy();
    feed(opened(1, 'ix-1'));
    expect(cache.get('acme', 'ix-1')).toBeUndefined();
  });
});
