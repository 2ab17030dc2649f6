import { askerAgent } from '../support/agents';
import { TestStack, writeAgents } from '../support/stack';

const NO_ANSWER = 'got: {"ok":false,"error":"no answer';

describe('deadlines', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await TestStack.start({ agentsDir: writeAgents([askerAgent('hasty', 1), askerAgent('patient', 2)]) });
  });

  afterAll(() => stack.close());

  async function expectExpiredOnce(runId: string, interactionId: string): Promise<void> {
    const { run } = await stack.waitForStatus(runId, 'finished');
    expect(run.summary).toContain(NO_ANSWER);
    const log = await stack.log(runId);
    expect(log.filter((e) => e.type === 'answer')).toEqual([expect.objectContaining({ interactionId, outcome: 'expired', by: { kind: 'deadline' } })]);
    const events = (await stack.http('GET', `/v1/runs/${runId}/events`)).body.events as any[];
    expect(events.filter((e) => e.type === 'interaction.resolved')).toHaveLength(1);
    const answer = await stack.answer(interactionId, { text: 'too late' });
    expect(answer.status).toBe(409);
    expect(answer.body.error.message).toContain('the deadline');
  }

  it('expires a question: the model gets "no answer" and the run carries on', async () => {
    const runId = await stack.startRun('hasty');
    const question = await stack.waitForQuestion(runId);
    expect(Date.parse(question.deadline) - Date.parse(question.createdAt)).toBeLessThanOrEqual(1000);
    await expectExpiredOnce(runId, question.id);
  });

  it('fires once when the interaction-service restarts before the deadline', async () => {
    const runId = await stack.startRun('patient');
    const question = await stack.waitForQuestion(runId);
    await stack.stopInteractions();
    await stack.startInteractions();
    await expectExpiredOnce(runId, question.id);
  });

  it('fires once when the worker restarts before the deadline', async () => {
    const runId = await stack.startRun('patient');
    const question = await stack.waitForQuestion(runId);
    await stack.stopWorker();
    await stack.startWorker();
    await expectExpiredOnce(runId, question.id);
  });
});
