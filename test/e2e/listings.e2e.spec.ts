/**
 * Listings that filter: a run's interactions (`GET /v1/interactions?runId=`) and the runs of a tenant
 * (`GET /v1/runs`) find what the caller asked for wherever it stands, within their documented bounds.
 */
import { ParleyStore, RedisKeys } from '@parley/store';
import { quickAgent } from '../support/agents';
import { TestStack, writeAgents } from '../support/stack';
import { waitFor } from '../support/wait-for';

const ask = (question: string) => ({ tool_calls: [{ name: 'ask_user_text', input: { question } }] });
const trio = {
  name: 'trio',
  model: { provider: 'scripted', turns: [ask('First?'), ask('Second?'), ask('Third?'), { tool_calls: [{ name: 'finish', input: { summary: 'done' } }] }] },
  tools: ['ask_user_text', 'finish'],
  limits: { max_iterations: 10, max_ask_user_per_loop: 5, interaction_timeout_secs: 0 },
};

describe('filtered listings', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await TestStack.start({ agentsDir: writeAgents([trio, quickAgent()]) });
  });

  afterAll(() => stack.close());

  const prompts = (interactions: any[]) => interactions.map((i) => i.prompt.prompt as string);

  it("a run's open question is listed however many it asked before; status=all lists its latest, in the order asked", async () => {
    const runId = await stack.startRun('trio');
    const asked = (expected: string) => waitFor(async () => ((await stack.waitForQuestion(runId)).prompt.prompt === expected ? true : undefined), { message: expected });
    for (const expected of ['First?', 'Second?']) {
      await asked(expected);
      expect((await stack.answer((await stack.waitForQuestion(runId)).id, { text: 'ok' })).status).toBe(200);
    }
    await asked('Third?');
    const open = await stack.http('GET', `/v1/interactions?runId=${runId}&limit=1`);
    expect(prompts(open.body.interactions)).toEqual(['Third?']);
    const latest = await stack.http('GET', `/v1/interactions?runId=${runId}&status=all&limit=2`);
    expect(prompts(latest.body.interactions)).toEqual(['Second?', 'Third?']);
    const all = await stack.http('GET', `/v1/interactions?runId=${runId}&status=all`);
    expect(prompts(all.body.interactions)).toEqual(['First?', 'Second?', 'Third?']);
    expect(all.body.interactions.map((i: any) => i.status)).toEqual(['answered', 'answered', 'open']);
    expect(all.body.next).toBeNull();
    // One at a time, `next` goes back to older ones.
    const older: string[] = [];
    let after: string | null = null;
    do {
      const page: { body: any } = await stack.http('GET', `/v1/interactions?runId=${runId}&status=all&limit=1${after === null ? '' : `&after=${after}`}`);
      older.push(...prompts(page.body.interactions));
      after = page.body.next;
    } while (after !== null && older.length < 10);
    expect(older).toEqual(['Third?', 'Second?', 'First?']);

    // Another member lists nothing of it, and the gateway does not even read its log for them.
    const store = stack.gateway!.get(ParleyStore, { strict: false });
    const reads = jest.spyOn(store.interactions, 'listForRun');
    try {
      const bob = stack.token({ sub: 'bob', role: 'member' });
      expect((await stack.http('GET', `/v1/interactions?runId=${runId}&status=all`, undefined, bob)).body).toEqual({ interactions: [], next: null });
      expect(reads).not.toHaveBeenCalled();
    } finally {
      reads.mockRestore();
    }
  });

  /** Every page of a listing, following `next`. */
  async function pages(query: string, token: string, betweenPages?: () => Promise<void>): Promise<{ runs: any[]; calls: number }> {
    const runs: any[] = [];
    let after: string | null = null;
    let calls = 0;
    do {
      if (calls > 0) {
        await betweenPages?.();
      }
      const page: { status: number; body: any } = await stack.http('GET', `/v1/runs?${query}${after ? `&after=${after}` : ''}`, undefined, token);
      expect(page.status).toBe(200);
      runs.push(...page.body.runs);
      after = page.body.next;
      calls += 1;
    } while (after !== null && calls < 100);
    return { runs, calls };
  }

  it('pages the runs with `next`, newest first, each once; a member finds their own past other people\'s', async () => {
    const admin = stack.token({ sub: 'root', role: 'admin' });
    const started: string[] = [];
    for (let n = 0; n < 5; n++) {
      started.push(await stack.startRun('quick', `run ${n}`, admin));
    }
    // Runs started while the listing is read, newer than its first page, shift nothing.
    const listed = await pages('limit=2', admin, async () => void (await stack.startRun('quick', 'meanwhile', admin)));
    const ids = listed.runs.map((run) => run.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.filter((id) => started.includes(id))).toEqual([...started].reverse());
    expect(listed.runs.filter((run) => run.task === 'meanwhile')).toEqual([]);

    // A member's one run, older than 10,050 runs of others: more than one call looks at.
    const carol = stack.token({ sub: 'carol', role: 'member' });
    const own = await stack.startRun('quick', 'mine', carol);
    await waitFor(async () => (await stack.run(own, carol)).run?.status === 'finished', { message: "carol's run to finish" });
    const keys = new RedisKeys(stack.config.prefix);
    const created = Date.now() + 60_000;
    const bulk = stack.redis.pipeline();
    for (let n = 0; n < 10_050; n++) {
      const runId = `others-${n}`;
      bulk.hset(keys.run('acme', runId), 'status', 'finished', 'owner', 'dave', 'agent', 'quick', 'task', 't', 'trigger', 'api', 'createdAt', created, 'updatedAt', created);
      bulk.zadd(keys.runIndex('acme'), created + n, runId);
    }
    await bulk.exec();
    const first = await stack.http('GET', '/v1/runs?limit=1', undefined, carol);
    expect(first.body.runs).toEqual([]);
    // A place in the index that names none of the runs the member may not see: a creation ms.
    expect(first.body.next).toMatch(/^\d+$/);
    const mine = await pages('limit=1', carol);
    expect(mine.runs.map((run) => run.id)).toEqual([own]);
    expect(mine.calls).toBeGreaterThan(1);
  });

  it('refuses a cursor that is not one, naming the field', async () => {
    // The last is the shape of the releases that counted runs (`<ms>.<count>`): refused, not misread.
    for (const after of ['yesterday', '1700000000000.3']) {
      const reply = await stack.http('GET', `/v1/runs?after=${after}`);
      expect(reply.status).toBe(400);
      expect(reply.body.error.details.issues).toEqual([{ field: 'after', reason: expect.stringContaining('next') }]);
    }
  });
});
