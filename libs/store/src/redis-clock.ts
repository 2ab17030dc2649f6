import type { RedisClient } from '@parley/platform';

/** How old a measurement may get before the next reading takes a new one. */
const RESYNC_MS = 30_000;

/**
 * This process's reading of Redis's clock: the host clock plus the offset a `TIME` measured, at
 * each (re)connect and again once the last measurement is RESYNC_MS old. Deadlines are filed and
 * judged on it (Redis's own clock, in the scripts), so hosts whose clocks disagree still agree on
 * when a deadline falls due. Until a first measurement, and while the two clocks agree within what
 * a round trip can tell, it reads the host clock.
 */
export class RedisClock {
  private offsetMs = 0;
  private measuredAt = Number.NEGATIVE_INFINITY;
  private measuring = false;

  constructor(private readonly redis: RedisClient) {
    redis.on('ready', () => this.measure());
    this.measure();
  }

  /** Redis's time now, in epoch ms, as far as this process can tell. */
  nowMs(): number {
    if (Date.now() - this.measuredAt > RESYNC_MS) {
      this.measure();
    }
    return Date.now() + this.offsetMs;
  }

  now(): Date {
    return new Date(this.nowMs());
  }

  /** The host-clock time (epoch ms) at which Redis's clock reads `redisMs`: BullMQ's delays are judged on host clocks. */
  hostMsOf(redisMs: number): number {
    return redisMs - this.offsetMs;
  }

  private measure(): void {
    if (this.measuring || this.redis.status !== 'ready') {
      return;
    }
    this.measuring = true;
    const sentAt = Date.now();
    void this.redis
      .time()
      .then(
        ([seconds, micros]) => {
          const receivedAt = Date.now();
          // Redis read its clock somewhere within the round trip: take the middle, and call the
          // clocks equal when they differ by less than that uncertainty.
          const offset = Number(seconds) * 1000 + Number(micros) / 1000 - (sentAt + receivedAt) / 2;
          this.offsetMs = Math.abs(offset) <= (receivedAt - sentAt) / 2 + 1 ? 0 : Math.round(offset);
          this.measuredAt = receivedAt;
        },
        () => undefined,
      )
      .finally(() => {
        this.measuring = false;
      });
  }
}
