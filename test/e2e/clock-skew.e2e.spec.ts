/**
 * Hosts whose clocks disagree: a loop-worker and an interaction-service run (as processes) with
 * their clocks shifted by libfaketime, 20 s apart from Redis's and from each other. A deadline is
 * filed and judged on Redis's clock, so the question still waits its timeout, no less and not much
 * more, and its times read true.
 */
import type { Interaction } from '@parley/contracts';
import { Harness } from '../harness/harness';
import { shiftedClock } from '../support/faketime';
import { waitFor } from '../support/wait-for';

const TIMEOUT_SECS = 3;
const SKEW = '20s';
const asker = {
  name: 'asker',
  model: {
    provider: 'scripted',
    turns: [{ tool_calls: [{ name: 'ask_user_text', input: { question: 'Anyone there?' } }] }, { tool_calls: [{ name: 'finish', input: { summary: 'answer: {{last_answer}}' } }] }],
  },
  tools: ['ask_user_text', 'finish'],
  limits: { max_iterations: 4, interaction_timeout_secs: TIMEOUT_SECS },
};

describe.each([
  { scenario: 'a loop-worker 20 s behind and an interaction-service 20 s ahead', worker: `-${SKEW}`, interactions: `+${SKEW}` },
  { scenario: 'a loop-worker 20 s ahead', worker: `+${SKEW}`, interactions: undefined },
])('deadlines with $scenario', ({ worker, interactions }) => {
  let h: Harness;

  beforeAll(async () => {
    h = await Harness.start({
      name: 'clock-skew',
      agents: [asker],
      serviceEnv: { 'worker-1': shiftedClock(worker), ...(interactions ? { 'interactions-1': shiftedClock(interactions) } : {}) },
    });
  });

  afterAll(async () => {
    await h?.close();
  });

  it('a question waits its timeout on the true clock, and its times are true', async () => {
    const runId = await h.startRun(1, 'asker');
    const interactionId = (await waitFor(() => h.openQuestion(runId), { message: 'the question to open' }))!;
    const seenOpenAt = Date.now();
    const read = async () => (await h.http<{ interaction: Interaction }>(1, 'GET', `/v1/interactions/${interactionId}`)).body.interaction;
    const opened = await read();
    const deadline = Date.parse(opened.deadline!);
    // The timeout counts from the question's log entry, stamped a moment before the interaction opened.
    expect(deadline - Date.parse(opened.createdAt)).toBeGreaterThan(TIMEOUT_SECS * 1000 - 500);
    expect(deadline - Date.parse(opened.createdAt)).toBeLessThanOrEqual(TIMEOUT_SECS * 1000);
    // Filed on Redis's clock (this host's), not the worker's shifted one.
    expect(Math.abs(Date.parse(opened.createdAt) - seenOpenAt)).toBeLessThan(2000);

    const expired = (await waitFor(async () => {
      const now = await read();
      return now.status === 'open' ? undefined : { interaction: now, seenAt: Date.now() };
    }, { timeoutMs: (TIMEOUT_SECS + 15) * 1000, intervalMs: 25, message: 'the deadline to resolve the question' }))!;
    expect(expired.interaction.status).toBe('expired');
    // Never before its deadline, and soon after it (a timer the shifted interaction-service promoted early waited again).
    expect(expired.seenAt).toBeGreaterThanOrEqual(deadline);
    expect(expired.seenAt - deadline).toBeLessThan(3000);
    const resolvedAt = Date.parse(expired.interaction.resolvedAt!);
    expect(resolvedAt).toBeGreaterThanOrEqual(deadline);
    expect(resolvedAt).toBeLessThanOrEqual(expired.seenAt + 1000);
    await waitFor(async () => (await h.runHash(runId)).status === 'finished', { message: 'the run to go on and finish' });
  });
});

const writer = {
  name: 'writer',
  model: {
    provider: 'scripted',
    turns: [{ tool_calls: [{ name: 'write_file', input: { path: 'a.txt', content: 'hello' } }] }, { tool_calls: [{ name: 'finish', input: { summary: 'written' } }] }],
  },
  tools: ['write_file', 'finish'],
  limits: { max_iterations: 4 },
};
const CLAIM_SECS = 10;

describe('approval claims with a gateway 20 s behind and one 20 s ahead', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await Harness.start({
      name: 'clock-skew-claims',
      gateways: 2,
      agents: [writer],
      env: { PARLEY_APPROVAL_CLAIM_SECS: String(CLAIM_SECS) },
      serviceEnv: { 'gateway-1': shiftedClock(`-${SKEW}`), 'gateway-2': shiftedClock(`+${SKEW}`) },
    });
  });

  afterAll(async () => {
    await h?.close();
  });

  it('a claim lasts its time on the true clock, whichever gateway takes or judges it', async () => {
    const runId = await h.startRun(1, 'writer');
    const approvalId = (await waitFor(() => h.openQuestion(runId), { message: 'the approval to open' }))!;
    const ann = h.token({ sub: 'ann', role: 'admin' });
    const bob = h.token({ sub: 'bob', role: 'admin' });

    const claimedAt = Date.now();
    const claimed = await h.http<{ interaction: Interaction }>(1, 'POST', `/v1/approvals/${approvalId}/claim`, undefined, ann);
    expect(claimed.status).toBe(200);
    const until = Date.parse(claimed.body.interaction.claim!.until);
    // Before, the gateway 20 s behind gave a claim that had ended 10 s before it was taken.
    expect(Math.abs(until - (claimedAt + CLAIM_SECS * 1000))).toBeLessThan(2000);

    // The gateway 20 s ahead sees the claim live, and refuses another admin's decision while it is.
    const seen = await h.http<{ interaction: Interaction }>(2, 'GET', `/v1/interactions/${approvalId}`, undefined, bob);
    expect(seen.body.interaction.claim).toEqual({ subject: 'ann', until: claimed.body.interaction.claim!.until });
    const refused = await h.http<{ error: { code: string } }>(2, 'POST', `/v1/interactions/${approvalId}/answer`, { decision: 'allow_once' }, bob);
    expect(refused.status).toBe(409);
    expect(Date.now()).toBeLessThan(until);

    // Once it has ended on the true clock, the other admin decides.
    const answered = (await waitFor(async () => {
      const res = await h.http(2, 'POST', `/v1/interactions/${approvalId}/answer`, { decision: 'allow_once' }, bob);
      return res.status === 200 ? Date.now() : undefined;
    }, { timeoutMs: (CLAIM_SECS + 10) * 1000, intervalMs: 200, message: 'the claim to end' }))!;
    expect(answered).toBeGreaterThanOrEqual(until - 1000);
    await waitFor(async () => (await h.runHash(runId)).status === 'finished', { message: 'the run to go on and finish' });
  });
});
