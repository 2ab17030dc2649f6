import { performance } from 'node:perf_hooks';
import type { RedisClient } from '@parley/platform';

/** How old a measurement may get before the next reading takes a new one. */
const RESYNC_MS = 30_000;
/** How soon a measurement is tried again after one failed or was thrown away. */
const RETRY_MS = 1000;
/**
 * A measurement whose round trip took longer (a busy event loop, a slow link) replaces an earlier one
 * only if it is the closer of the two: it places Redis's clock within half its round trip. The first
 * is taken whatever its round trip (a start on a loaded host): within a fraction of a second beats a
 * host clock that may be off by any amount.
 */
const MAX_ROUND_TRIP_MS = 50;
/**
 * A new measurement may place Redis's clock a little earlier than the one before it did (each is
 * only within half its round trip; the host clock read before the first is whole ms). Readings hold
 * still rather than step back by up to this much, so what one process stamps in order stays in
 * order. A bigger step is a correction (the host's clock was off) and is taken.
 */
const MAX_HOLD_MS = 1000;

/**
 * This process's reading of Redis's clock: Redis's `TIME`, measured at each (re)connect and again
 * once the last measurement is RESYNC_MS old, carried forward on the monotonic clock (so a step of
 * the host's clock changes nothing). Deadlines are filed on it (and judged on Redis's own clock, in
 * the scripts), so hosts whose clocks disagree still agree on when a deadline falls due. Until a
 * first measurement it reads the host clock; clocks that agree within what a round trip can tell
 * are taken as one, the host's.
 */
export class RedisClock {
  /** Redis's clock (epoch ms) when performance.now() read `at`, placed within `roundTrip / 2`. */
  private anchor?: { redisMs: number; at: number; roundTrip: number };
  private triedAt = Number.NEGATIVE_INFINITY;
  private measuring = false;
  private lastMs = Number.NEGATIVE_INFINITY;

  constructor(private readonly redis: RedisClient) {
    redis.on('ready', () => this.measure());
    this.measure();
  }

  /** Redis's time now, in epoch ms, as far as this process can tell. */
  nowMs(): number {
    const at = performance.now();
    if ((!this.anchor || at - this.anchor.at > RESYNC_MS) && at - this.triedAt >= RETRY_MS) {
      this.measure();
    }
    return this.neverBack(this.anchor ? this.anchor.redisMs + (at - this.anchor.at) : Date.now());
  }

  now(): Date {
    return new Date(this.nowMs());
  }

  private neverBack(ms: number): number {
    if (ms < this.lastMs && this.lastMs - ms <= MAX_HOLD_MS) {
      return this.lastMs;
    }
    this.lastMs = ms;
    return ms;
  }

  private measure(): void {
    if (this.measuring || this.redis.status !== 'ready') {
      return;
    }
    this.measuring = true;
    const [sentAt, hostAtSend] = [performance.now(), Date.now()];
    this.triedAt = sentAt;
    void this.redis
      .time()
      .then(
        ([seconds, micros]) => {
          const roundTrip = performance.now() - sentAt;
          if (this.anchor && roundTrip > MAX_ROUND_TRIP_MS && roundTrip >= this.anchor.roundTrip) {
            return;
          }
          // Redis read its clock somewhere within the round trip: place it in the middle.
          const redisMs = Number(seconds) * 1000 + Number(micros) / 1000;
          const hostMs = hostAtSend + roundTrip / 2;
          this.anchor = { redisMs: Math.abs(redisMs - hostMs) <= roundTrip / 2 + 1 ? hostMs : redisMs, at: sentAt + roundTrip / 2, roundTrip };
        },
        () => undefined,
      )
      .finally(() => {
        this.measuring = false;
      });
  }
}
