import type { EventType, ParleyEvent } from '@parley/contracts';

/** Live events of a subscription held while its replay runs, at most (past that, the replay reads on). */
export const LIVE_BUFFER = 5_000;

/** One socket's view of the event stream: what it asked for and how far it has got. */
export interface Subscription {
  runId?: string;
  owner?: string;
  types?: ReadonlySet<EventType>;
  lastSeq: number;
  /** While the replay runs, live events it admits wait here so none overtakes or duplicates it. */
  buffer: ParleyEvent[] | null;
  /** More live events came during the replay than the buffer holds: they were dropped, to be read from the stream. */
  overflowed?: boolean;
}

/**
 * Whether a live event goes to a subscription now: not while its replay runs (an event it asked for
 * waits in the buffer; past LIVE_BUFFER the buffer starts over and the replay reads on from the
 * stream), not twice, not outside its run or owner. Moves the subscription's `lastSeq`.
 */
export function admits(subscription: Subscription, event: ParleyEvent): boolean {
  if (subscription.buffer) {
    if (!matches(subscription, event)) {
      return false;
    }
    if (subscription.buffer.length >= LIVE_BUFFER) {
      subscription.buffer = [];
      subscription.overflowed = true;
    }
    subscription.buffer.push(event);
    return false;
  }
  if (event.seq <= subscription.lastSeq) {
    return false;
  }
  subscription.lastSeq = event.seq;
  return matches(subscription, event);
}

/** Whether the event is one the subscription asked for (its run, its owner, its types). */
export function matches(subscription: Subscription, event: ParleyEvent): boolean {
  return (
    (!subscription.runId || event.runId === subscription.runId) &&
    (!subscription.owner || event.owner === subscription.owner) &&
    (!subscription.types || subscription.types.has(event.type))
  );
}
