/**
 * The gateway answers an interaction it saw open without reading it back from Redis
 * (OpenInteractionCache). What it does not know (a claim, an answer given elsewhere) is decided
 * by the resolve step, with the same replies a read would have given.
 */
import { ParleyQueues, RedisKeys } from '@parley/store';
import { OPEN_INTERACTION_ENTRY_BYTES, OpenInteractionCache } from '../../apps/gateway/src/interactions/open-interaction.cache';
import { askerAgent } from '../support/agents';
import { TestStack, writeAgents } from '../support/stack';
import { waitFor } from '../support/wait-for';

/** Asks for the review of a document too big for the gateway's cache of open interactions. */
function bigReviewer() {
  return {
    name: 'big-review',
    model: {
      provider: 'scripted',
      turns: [
        { tool_calls: [{ name: 'present_for_review', input: { title: 'plan.md', markdown: `# Plan\n${'x'.repeat(OPEN_INTERACTION_ENTRY_BYTES)}` } }] },
        { tool_calls: [{ name: 'finish', input: { summary: 'reviewed' } }] },
      ],
    },
    tools: ['present_for_review', 'finish'],
    limits: { max_iterations: 5, interaction_timeout_secs: 0 },
  };
}

describe('answering an interaction the gateway saw open', () => {
  let stack: TestStack;
  let keys: RedisKeys;

  beforeAll(async () => {
    stack = await TestStack.start({ agentsDir: writeAgents([askerAgent('asker', 1), askerAgent('patient', 0), bigReviewer()]) });
    keys = new RedisKeys(stack.config.prefix);
  });

  afterAll(() => stack.close());

  /** A question the gateway holds in its cache, as `interaction.opened` announced it. */
  async function cachedQuestion(agent = 'asker'): Promise<{ runId: string; id: string }> {
    const runId = await stack.startRun(agent);
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

  it('an answer that does not fit an interaction resolved without the gateway hearing of it gets the 409, not a 422', async () => {
    // No deadline: only the test resolves it.
    const { runId, id } = await cachedQuestion('patient');
    // While it is open, an answer that does not fit the free_text question is a 422...
    const misfit = await stack.answer(id, { choice: 1 });
    expect(misfit.status).toBe(422);
    expect(misfit.body.error.code).toBe('invalid_answer');
    // ...and once it has expired (the gateway's copy still says open), the same answer is the conflict.
    await stack.redis.hset(keys.interaction('acme', id), 'status', 'expired', 'resolvedAt', Date.now(), 'resolvedBy', JSON.stringify({ kind: 'deadline' }));
    const refused = await stack.answer(id, { choice: 1 });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'conflict', details: { status: 'expired', resolvedBy: { kind: 'deadline' } } });
    expect((await stack.log(runId)).filter((entry: { type: string }) => entry.type === 'answer')).toHaveLength(0);
  });

  it('over the socket, an answer that does not fit a question someone else claimed gets the claim conflict', async () => {
    const { id } = await cachedQuestion('patient');
    const until = Date.now() + 60_000;
    await stack.redis.hset(keys.interaction('acme', id), 'claimSubject', 'bob', 'claimUntil', until);
    const client = await stack.connect();
    try {
      const ack = await client.answer(id, { confirmed: true });
      expect(ack.error).toMatchObject({ code: 'conflict', details: { claim: { subject: 'bob', until: new Date(until).toISOString() } } });
    } finally {
      client.close();
    }
    expect(await stack.redis.hget(keys.interaction('acme', id), 'status')).toBe('open');
  });

  it('an interaction too big for the cache is not held, and its answer (read from Redis) goes through', async () => {
    const bigRunId = await stack.startRun('big-review');
    const big = (await stack.waitForQuestion(bigRunId)) as { id: string };
    // The tenant's events reach the cache in order: once a later question is in it, the big one was seen.
    await cachedQuestion('patient');
    expect(stack.gateway!.get(OpenInteractionCache).get('acme', big.id)).toBeUndefined();
    expect((await stack.answer(big.id, { approved: true })).status).toBe(200);
    await stack.waitForStatus(bigRunId, 'finished');
  });

  it('an answer to a question the gateway saw open goes through, and the question leaves the cache', async () => {
    const { runId, id } = await cachedQuestion();
    expect((await stack.answer(id, { text: 'go' })).status).toBe(200);
    await stack.waitForStatus(runId, 'finished');
    await waitFor(() => stack.gateway!.get(OpenInteractionCache).get('acme', id) === undefined, { message: 'the question to leave the cache' });
  });
});

describe("the run's job an answer sends right behind its resolve", () => {
  let stack: TestStack;
  let keys: RedisKeys;

  beforeAll(async () => {
    // No sweeper round in the test's time: only the answers' own jobs can move the run on.
    stack = await TestStack.start({ agentsDir: writeAgents([askerAgent('patient', 0)]), overrides: { sweepMs: 3_600_000 } });
    keys = new RedisKeys(stack.config.prefix);
  });

  afterAll(() => stack.close());

  it('an answer refused by a claim leaves no job that would hold back the answer that comes after it', async () => {
    const runId = await stack.startRun('patient');
    const { id } = (await stack.waitForQuestion(runId)) as { id: string };
    const cache = stack.gateway!.get(OpenInteractionCache);
    const seen = (await waitFor(() => cache.get('acme', id), { message: 'the gateway to see the question open' }))!;
    // The question was published with the run's wake counter as it parked.
    expect(seen.parkedWake).toBe(Number((await stack.redis.hget(keys.run('acme', runId), 'wake')) ?? 0));
    await stack.redis.hset(keys.interaction('acme', id), 'claimSubject', 'bob', 'claimUntil', Date.now() + 60_000);
    expect((await stack.answer(id, { text: 'not mine to give' })).status).toBe(409);

    // The job sent behind the refused resolve, numbered as the answer's wake would have been, is
    // taken by the worker, which finds the run still waiting.
    const early = await stack.gateway!.get(ParleyQueues).runs.getJob(`run.acme.${runId}.${seen.parkedWake! + 1}`);
    expect(early).toBeDefined();
    await waitFor(async () => (await early!.getState()) === 'completed', { message: 'the early job to be done' });
    expect((await stack.run(runId)).run.status).toBe('waiting');

    await stack.redis.hdel(keys.interaction('acme', id), 'claimSubject', 'claimUntil');
    expect((await stack.answer(id, { text: 'mine now' })).status).toBe(200);
    await stack.waitForStatus(runId, 'finished');
  });
});
