import { RateLimitedError } from '@parley/contracts';

/** Subscribes a socket may send at once before the per-minute rate applies. */
export const SUBSCRIBE_BURST = 10;

/**
 * A socket's subscribes, as a token bucket: SUBSCRIBE_BURST at once, then `perMinute` a minute
 * (0 = no limit). Each subscribe replays events (up to a tenant's whole stream for an admin): a
 * client stuck in a subscribe loop would otherwise keep a gateway and Redis busy for nothing.
 */
export class SubscribeBudget {
  private tokens = SUBSCRIBE_BURST;

  constructor(
    private readonly perMinute: number,
    private at = Date.now(),
  ) {}

  /** Takes one subscribe, or says in how many seconds the next one is allowed. */
  take(now = Date.now()): { status: 'taken' } | { status: 'spent'; retryAfterSecs: number } {
    if (this.perMinute === 0) {
      return { status: 'taken' };
    }
    const perMs = this.perMinute / 60_000;
    this.tokens = Math.min(SUBSCRIBE_BURST, this.tokens + (now - this.at) * perMs);
    this.at = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return { status: 'taken' };
    }
    return { status: 'spent', retryAfterSecs: Math.max(1, Math.ceil((1 - this.tokens) / perMs / 1000)) };
  }

  /** Takes one subscribe, or throws the 429 that says when the next is allowed. */
  spend(now = Date.now()): void {
    const taken = this.take(now);
    if (taken.status === 'spent') {
      throw new RateLimitedError('socket_subscribes_per_minute', taken.retryAfterSecs, `this socket subscribed more than ${SUBSCRIBE_BURST} times at once and ${this.perMinute} a minute; subscribe again in ${taken.retryAfterSecs} s`);
    }
  }
}
