import type { Redis } from 'ioredis';
import { ParleyStore } from '@parley/store';
import { EventFeed } from '../../apps/gateway/src/events/event.feed';
import { EventsGateway } from '../../apps/gateway/src/events/events.gateway';
import { askerAgent } from '../support/agents';
import { TestStack, writeAgents } from '../support/stack';
import { waitFor } from '../support/wait-for';

/** The gateway's feed of live events, and its pub/sub connection (to drop messages on purpose). */
function feedOf(stack: TestStack): { feed: EventFeed; subscriber: Redis; channel: string; store: ParleyStore } {
  const feed = stack.gateway!.get(EventFeed);
  const store = stack.gateway!.get(ParleyStore, { strict: false });
  return { feed, subscriber: (feed as unknown as { subscriber: Redis }).subscriber, channel: store.ctx.keys.eventsChannel(), store };
}

describe("the gateway's live event feed", () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await TestStack.start({ agentsDir: writeAgents([askerAgent()]) });
  });

  afterAll(() => stack.close());

  it('fills a gap whose first read failed later on its own, though no further event comes to reveal it', async () => {
    const { subscriber, channel, store } = feedOf(stack);
    const client = await stack.connect();
    try {
      await client.subscribe({ types: ['message.received'] });
      const runId = await stack.startRun('asker');
      await stack.waitForQuestion(runId);

      // A message the gateway misses (its pub/sub subscription is off), then one that reveals the gap,
      // whose fill fails once.
      await subscriber.unsubscribe(channel);
      expect((await stack.http('POST', `/v1/runs/${runId}/messages`, { text: 'missed' })).status).toBe(202);
      await subscriber.subscribe(channel);
      const read = jest.spyOn(store.events, 'replayTenant').mockRejectedValueOnce(new Error('Redis went away'));
      try {
        expect((await stack.http('POST', `/v1/runs/${runId}/messages`, { text: 'reveals the gap' })).status).toBe(202);
        await waitFor(() => read.mock.calls.length >= 2, { message: 'the fill tried again' });
      } finally {
        read.mockRestore();
      }
      const received = () => client.events.filter((e) => e.runId === runId && e.type === 'message.received');
      await waitFor(() => received().length === 2, { message: 'both messages delivered' });
      const [missed, revealing] = received();
      expect(missed.seq).toBeLessThan(revealing.seq);
    } finally {
      client.close();
    }
  });

  it('reads nothing from the stream while no message is missed, though seqs are not consecutive', async () => {
    const { store } = feedOf(stack);
    const client = await stack.connect();
    await client.subscribe({});
    // From here on: the subscribe's replay is done.
    const read = jest.spyOn(store.events, 'replayTenant');
    try {
      const runId = await stack.startRun('asker');
      await stack.waitForQuestion(runId);
      await waitFor(() => client.events.some((e) => e.runId === runId && e.type === 'run.status' && e.data.status === 'waiting'), { message: 'the run parked' });
      const seqs = client.events.filter((e) => e.runId === runId).map((e) => e.seq);
      expect(seqs.length).toBeGreaterThanOrEqual(5);
      expect(seqs.some((seq, i) => i > 0 && seq !== seqs[i - 1] + 1)).toBe(true);
      expect(read).not.toHaveBeenCalled();
    } finally {
      read.mockRestore();
      client.close();
    }
  });

  it("follows only the tenants this gateway's sockets subscribed to, and stops when their last socket leaves", async () => {
    const { feed } = feedOf(stack);
    // The first test's socket has gone: nothing is followed.
    await waitFor(() => feed.tracked === 0, { message: 'no tenant followed' });
    // A tenant without sockets here: its events pass on the channel and are not followed.
    const quiet = stack.token({ tenant: 'quiet', sub: 'q' });
    const quietRun = await stack.startRun('asker', 'do the thing', quiet);
    await stack.waitForQuestion(quietRun, 20_000, quiet);
    expect(feed.tracked).toBe(0);

    const visitor = await stack.connect(stack.token({ tenant: 'visiting', sub: 'v' }));
    expect(await visitor.subscribe({})).toEqual({ ok: true, lastSeq: expect.any(Number), truncated: false });
    expect(feed.tracked).toBe(1);
    visitor.close();
    await waitFor(() => feed.tracked === 0, { message: 'the tenant left behind' });
  });

  it('a socket that leaves while its subscribe is still being done leaves no tenant followed', async () => {
    const { feed, store } = feedOf(stack);
    await waitFor(() => feed.tracked === 0, { message: 'no tenant followed' });
    const leaving = await stack.connect(stack.token({ tenant: 'leaving', sub: 'l' }));
    const lastSeq = store.events.lastSeq.bind(store.events);
    const read = jest.spyOn(store.events, 'lastSeq').mockImplementationOnce(async (tenant) => {
      const id = leaving.socket.id;
      leaving.close();
      const sockets = stack.gateway!.get(EventsGateway).namespace.sockets;
      await waitFor(() => !sockets.has(id!), { message: 'the gateway to see the socket leave' });
      return lastSeq(tenant);
    });
    try {
      leaving.subscribe({}).catch(() => undefined);
      await waitFor(() => read.mock.results.length === 1 && read.mock.results[0].type === 'return', { message: 'the subscribe to read the seq' });
      await read.mock.results[0].value;
      // The subscribe went on after the socket left: it must not have started following the tenant.
      await new Promise((resolve) => setImmediate(resolve));
      expect(feed.tracked).toBe(0);
    } finally {
      read.mockRestore();
    }
  });
});
