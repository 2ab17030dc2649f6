import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { Redis } from 'ioredis';
import { EventChannelFollower } from './event-channel.follower';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

describe('EventChannelFollower', () => {
  const channel = `follower-spec:${randomUUID()}`;
  let admin: Redis;
  let subscriber: Redis;
  const followers = async () => ((await admin.pubsub('NUMSUB', channel)) as [string, number])[1];

  beforeAll(() => {
    admin = new Redis(REDIS_URL);
    subscriber = new Redis(REDIS_URL);
  });

  afterAll(async () => {
    subscriber.disconnect();
    await admin.quit();
  });

  it('subscribes only while wanted, and calls racing each other end where the last one asked', async () => {
    const follower = new EventChannelFollower(subscriber, channel);
    expect(await followers()).toBe(0);
    await follower.follow(true);
    expect([follower.isFollowing, await followers()]).toEqual([true, 1]);
    await follower.follow(true);
    expect(await followers()).toBe(1);
    await follower.follow(false);
    expect([follower.isFollowing, await followers()]).toEqual([false, 0]);

    // Each change starts once the one before it is done, and goes to what was asked last.
    await Promise.all([follower.follow(true), follower.follow(false)]);
    expect([follower.isFollowing, await followers()]).toEqual([false, 0]);
    await follower.follow(true);
    await Promise.all([follower.follow(false), follower.follow(true)]);
    expect([follower.isFollowing, await followers()]).toEqual([true, 1]);
    await Promise.all([follower.follow(false), follower.follow(true), follower.follow(false)]);
    expect([follower.isFollowing, await followers()]).toEqual([false, 0]);
  });

  it('calls back each time a subscribe takes effect, not when it was following already', async () => {
    let subscribed = 0;
    const follower = new EventChannelFollower(subscriber, channel, () => subscribed++);
    await follower.follow(true);
    await follower.follow(true);
    expect(subscribed).toBe(1);
    await follower.follow(false);
    await Promise.all([follower.follow(true), follower.follow(true)]);
    expect(subscribed).toBe(2);
    await follower.follow(false);
    expect(await followers()).toBe(0);
  });

  it('renews a subscription lost behind its back (a Cluster subscriber can lose it unnoticed)', async () => {
    let subscribed = 0;
    const follower = new EventChannelFollower(subscriber, channel, () => subscribed++);
    await follower.follow(true);
    await subscriber.unsubscribe(channel);
    await follower.follow(true);
    expect([follower.isFollowing, await followers()]).toEqual([true, 0]);
    await follower.follow(true, true);
    expect([follower.isFollowing, await followers(), subscribed]).toEqual([true, 1, 1]);
    await follower.follow(false, true);
    expect(await followers()).toBe(0);
  });

  it('a failed subscribe leaves it not following, and the next call tries again', async () => {
    // Not connected yet, and no offline queue: the first subscribe is refused at once.
    const early = new Redis(REDIS_URL, { lazyConnect: true, enableOfflineQueue: false });
    const follower = new EventChannelFollower(early, channel);
    try {
      await expect(follower.follow(true)).rejects.toThrow();
      expect(follower.isFollowing).toBe(false);
      if (early.status !== 'ready') {
        await once(early, 'ready');
      }
      await follower.follow(true);
      expect([follower.isFollowing, await followers()]).toEqual([true, 1]);
    } finally {
      early.disconnect();
    }
  });
});
