import type { Worker } from 'bullmq';
import { jobIds } from '@parley/contracts';
import { ParleyQueues } from '@parley/store';
import { DeadlineProcessor } from '../../apps/interaction-service/src/deadlines/deadline.processor';
import { startInteractionService } from '../../apps/interaction-service/src/interaction-service.app';
import { askerAgent } from '../support/agents';
import { TestStack, writeAgents } from '../support/stack';
import { waitFor } from '../support/wait-for';

const NO_ANSWER = 'got: {"ok":false,"error":"no answer';

describe('deadlines', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await TestStack.start({ agentsDir: writeAgents([askerAgent('hasty', 1), askerAgent('patient', 2), askerAgent('steady', 4), askerAgent('late', 6)]) });
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

  it('takes over the timer job of an interaction-service that died while sweeping, within seconds', async () => {
    const queues = stack.gateway!.get(ParleyQueues);
    const dying = stack.interactions!.get(DeadlineProcessor);
    // This process takes the timer job when the deadline falls due, and never finishes it.
    const hung = jest.spyOn(dying, 'process').mockImplementation(() => new Promise(() => undefined));
    const runId = await stack.startRun('hasty');
    const question = await stack.waitForQuestion(runId);
    await waitFor(async () => (await queues.deadlines.getActiveCount()) === 1, { message: 'the timer job to be taken' });
    // It dies: its lock is no longer renewed, the job stays active until the lock runs out.
    await (dying as unknown as { queueWorker: { worker: Worker } }).queueWorker.worker.close(true);
    const died = Date.now();
    const other = await startInteractionService(stack.config);
    try {
      await stack.waitForStatus(runId, 'finished');
      // BullMQ's defaults (a 30 s lock, a stalled check every 30 s) would leave it up to a minute.
      expect(Date.now() - died).toBeLessThan(3 * stack.config.leaseMs);
      await expectExpiredOnce(runId, question.id);
    } finally {
      hung.mockRestore();
      await other.close();
      await stack.stopInteractions();
      await stack.startInteractions();
    }
  });

  it('keeps one timer per tenant: a later deadline has no job of its own and still fires; an answered one never does', async () => {
    const queues = stack.gateway!.get(ParleyQueues);
    const tenant = 'acme';
    const steady = await stack.startRun('steady');
    const steadyQuestion = await stack.waitForQuestion(steady);
    const late = await stack.startRun('late');
    const lateQuestion = await stack.waitForQuestion(late);
    const answered = await stack.startRun('late');
    const answeredQuestion = await stack.waitForQuestion(answered);
    expect((await stack.answer(answeredQuestion.id, { text: 'in time' })).status).toBe(200);

    const steadyTimer = jobIds.deadlineTimer(tenant, Date.parse(steadyQuestion.deadline));
    expect(await queues.deadlines.getJobState(steadyTimer)).toBe('delayed');
    expect(await queues.deadlines.getJobState(jobIds.deadlineTimer(tenant, Date.parse(lateQuestion.deadline)))).toBe('unknown');
    expect(await queues.deadlines.getJobState(jobIds.deadlineTimer(tenant, Date.parse(answeredQuestion.deadline)))).toBe('unknown');
    const open = await stack.redis.zrange(`${stack.config.prefix}:{t:${tenant}}:open-ix`, '0', '-1');
    expect(open).toEqual([steadyQuestion.id, lateQuestion.id]);

    await expectExpiredOnce(steady, steadyQuestion.id);
    await expectExpiredOnce(late, lateQuestion.id);
    const { run } = await stack.waitForStatus(answered, 'finished');
    expect(run.summary).toBe('got: in time');
    await waitFor(async () => (await stack.redis.exists(`${stack.config.prefix}:{t:${tenant}}:deadline-timer`)) === 0, { message: 'the timer to be cleared' });
    expect(await stack.redis.exists(`${stack.config.prefix}:{t:${tenant}}:open-ix`)).toBe(0);
  });
});
