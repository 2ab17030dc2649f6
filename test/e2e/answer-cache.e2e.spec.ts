/**
 * The gateway answers an interaction it saw open without reading it back from Redis
 * (OpenInteractionCache). What it does not know (a claim, an answer given elsewhere) is decided
 * by the resolve step, with the same replies a read would have given.
 */
import { RedisKeys } from '@parley/store';
import { OpenInteractionCache } from '../../apps/gateway/src/interactions/open-interaction.cache';
import { askerAgent } from '../support/agents';
import { TestStack, writeAgents } from '../support/stack';
import { waitFor } from '../support/wait-for';

describe('answering an interaction the gateway saw open', () => {
  let stack: TestStack;
  let keys: RedisKeys;

  beforeAll(async () => {
    stack = await TestStack.start({ agentsDir: writeAgents([askerAgent('asker', 1)]) });
    keys = new RedisKeys(stack.config.prefix);
  });

  afterAll(() => stack.close());

  /** A question the gateway holds in its cache, as `interaction.opened` announced it. */
  async function cachedQuestion(): Promise<{ runId: string; id: string }> {
    const runId = await stack.startRun('asker');
    const { id } = (await stack.waitForQuestion(runId)) as { id: string };
    const cache = stack.gateway!.get(OpenInteractionCache);
    await waitFor(() => cache.get('acme', id) !== undefined, { message: 'the gateway to see the question open' });
    return { runId, id };
  }

  it('refuses an answer while someone else holds a claim the gateway never heard of', async () => {
    const { id } = await cachedQuestion();
    const until = Date.now() + 60_000;
    await stack.redis.hset(keys.interaction('acme', id), 'claimSubject', 'bob', 'claimUntil', until);
    const refused = await stack.answer(id, { text: 'mine' });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'conflict', details: { claim: { subject: 'bob', until: new Date(until).toISOString() } } });
    expect(await stack.redis.hget(keys.interaction('acme', id), 'status')).toBe('open');
  });

  it('an interaction resolved without the gateway hearing of it gets the conflict naming who resolved it', async () => {
    const { runId, id } = await cachedQuestion();
    // Resolved while the gateway's copy still says open (as if its event were still on the way).
    await stack.redis.hset(keys.interaction('acme', id), 'status', 'expired', 'resolvedAt', Date.now(), 'resolvedBy', JSON.stringify({ kind: 'deadline' }));
    const refused = await stack.answer(id, { text: 'too late' });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'conflict', details: { status: 'expired', resolvedBy: { kind: 'deadline' } } });
    expect((await stack.log(runId)).filter((entry: { type: string }) => entry.type === 'answer')).toHaveLength(0);
  });

  it('an answer to a question the gateway saw open goes through, and the question leaves the cache', async () => {
    const { runId, id } = await cachedQuestion();
    expect((await stack.answer(id, { text: 'go' })).status).toBe(200);
    await stack.waitForStatus(runId, 'finished');
    await waitFor(() => stack.gateway!.get(OpenInteractionCache).get('acme', id) === undefined, { message: 'the question to leave the cache' });
  });
});
