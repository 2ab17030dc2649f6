import type { RedisClient } from '@parley/platform';

/**
 * The deployment's event channel, subscribed to only while it is wanted. Every script publishes
 * each event there; a webhook dispatcher with no tenant to route for would wake for every one of
 * them just to drop it. Changes are applied one at a time, each to the latest wanted state, so
 * callers racing each other end where the last of them asked. `onSubscribed` runs each time a
 * subscription starts: what was written before it was not announced, and must be read.
 */
export class EventChannelFollower {
  private following = false;
  private wanted = false;
  private settled: Promise<void> = Promise.resolve();

  constructor(
    private readonly subscriber: RedisClient,
    private readonly channel: string,
    private readonly onSubscribed: () => void = () => undefined,
  ) {}

  get isFollowing(): boolean {
    return this.following;
  }

  /**
   * Subscribes or unsubscribes; resolves once the subscriber is as the latest call wants it.
   * `renew`: subscribes again even if following (harmless when the subscription holds).
   */
  follow(wanted: boolean, renew = false): Promise<void> {
    this.wanted = wanted;
    this.settled = this.settled.catch(() => undefined).then(() => this.settle(renew));
    return this.settled;
  }

  private async settle(renew: boolean): Promise<void> {
    if (this.wanted && (!this.following || renew)) {
      const was = this.following;
      await this.subscriber.subscribe(this.channel);
      this.following = true;
      if (!was) {
        this.onSubscribed();
      }
    } else if (!this.wanted && this.following) {
      await this.subscriber.unsubscribe(this.channel);
      this.following = false;
    }
  }
}
