import type { ParleyEvent } from '@parley/contracts';
import { RedisKeys } from '@parley/store';
import { askerAgent } from '../support/agents';
import { TestStack, writeAgents } from '../support/stack';
import { waitFor } from '../support/wait-for';

/** A replay from before what the capped tenant stream still holds says so: the ack, and the HTTP page. */
describe('a replay that the event stream cap cut short', () => {
  let stack: TestStack;
  let runIds: string[];
  let stored: ParleyEvent[];

  beforeAll(async () => {
    // The stream keeps about 10 events: it is trimmed once it holds 100 more.
    stack = await TestStack.start({ agentsDir: writeAgents([askerAgent()]), overrides: { eventsMaxLen: 10 } });
    runIds = [await stack.startRun('asker'), await stack.startRun('asker')];
    await Promise.all(runIds.map((runId) => stack.waitForQuestion(runId)));
    for (let i = 0; i < 60; i++) {
      for (const runId of runIds) {
        expect((await stack.http('POST', `/v1/runs/${runId}/messages`, { text: `message ${i}` })).status).toBe(202);
      }
    }
    stored = (await stack.http('GET', `/v1/runs/${runIds[1]}/events?since=0`)).body.events as ParleyEvent[];
  });

  afterAll(() => stack.close());

  it('acks a subscribe from before the oldest stored event with truncated: true, and one from a stored event with false', async () => {
    expect(await stack.redis.xlen(new RedisKeys(stack.config.prefix).tenantEvents('acme'))).toBeLessThan(110);
    const late = await stack.connect();
    const fresh = await stack.connect();
    const live = await stack.connect();
    try {
      const ack = await late.subscribe({ since: 0 });
      expect(ack).toEqual({ ok: true, lastSeq: expect.any(Number), truncated: true });
      await waitFor(() => late.events.length > 0 && late.events.at(-1)!.seq === ack.lastSeq, { message: 'the replay' });
      const [oldest] = late.events;

      expect(await fresh.subscribe({ since: oldest.seq })).toEqual({ ok: true, lastSeq: ack.lastSeq, truncated: false });
      expect(await live.subscribe({})).toEqual({ ok: true, lastSeq: ack.lastSeq, truncated: false });
      // One run's replay: cut short only when that run's own events were trimmed.
      expect(await live.subscribe({ runId: runIds[1], since: 0 })).toEqual({ ok: true, lastSeq: ack.lastSeq, truncated: true });
      expect(await live.subscribe({ runId: runIds[1], since: stored[0].seq })).toEqual({ ok: true, lastSeq: ack.lastSeq, truncated: false });
    } finally {
      late.close();
      fresh.close();
      live.close();
    }
  });

  it('says the same in the HTTP events page', async () => {
    const first = await stack.http('GET', `/v1/runs/${runIds[1]}/events?since=0`);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ events: stored, truncated: true });
    expect(stored.length).toBeGreaterThan(0);
    expect((await stack.http('GET', `/v1/runs/${runIds[1]}/events?since=${stored[0].seq}`)).body).toEqual({ events: stored.slice(1), truncated: false });
  });
});
