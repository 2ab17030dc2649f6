import { ParleyQueues } from '@parley/store';
import { askerAgent } from '../support/agents';
import { startFakeAnthropic, type FakeAnthropic } from '../support/fake-anthropic';
import { TestStack, writeAgents } from '../support/stack';

describe('durability', () => {
  let fake: FakeAnthropic;
  let stack: TestStack;

  beforeAll(async () => {
    fake = await startFakeAnthropic();
    const claude = {
      name: 'claude',
      model: { provider: 'anthropic', name: 'claude-test' },
      tools: ['ask_user_text', 'finish'],
      limits: { interaction_timeout_secs: 0 },
    };
    stack = await TestStack.start({
      agentsDir: writeAgents([askerAgent(), claude]),
      overrides: { anthropicApiKey: 'k', anthropicBaseUrl: fake.url },
    });
  });

  afterAll(async () => {
    await stack.close();
    await fake.close();
  });

  it('10 parked runs survive a stop of every service and finish once answered', async () => {
    const runIds: string[] = [];
    for (let i = 0; i < 10; i++) {
      runIds.push(await stack.startRun('asker'));
    }
    const questions = await Promise.all(runIds.map((runId) => stack.waitForQuestion(runId)));
    await stack.stopAll();
    await stack.startAll();
    for (const [i, question] of questions.entries()) {
      expect((await stack.answer(question.id, { text: `after restart ${i}` })).status).toBe(200);
    }
    for (const [i, runId] of runIds.entries()) {
      expect((await stack.waitForStatus(runId, 'finished')).run.summary).toBe(`got: after restart ${i}`);
    }
  });

  it('a resume that finds its question still open makes no model call and parks again', async () => {
    fake.setResponder([{ toolCalls: [{ name: 'ask_user_text', input: { question: 'Still there?' } }] }, { toolCalls: [{ name: 'finish', input: { summary: 'ok' } }] }]);
    const runId = await stack.startRun('claude');
    const question = await stack.waitForQuestion(runId);
    expect(fake.requests).toHaveLength(1);

    // What a crashed worker leaves behind: the run queued again while its question is open.
    await stack.redis.hset(`${stack.config.prefix}:{t:acme}:run:${runId}`, 'status', 'queued');
    const queues = new ParleyQueues(stack.redis, `${stack.config.prefix}:bull`);
    await queues.enqueueRun({ tenant: 'acme', runId, wake: 99 });
    const again = await stack.waitForQuestion(runId);
    await queues.close();
    expect(again.id).toBe(question.id);
    expect(fake.requests).toHaveLength(1);
    const log = await stack.log(runId);
    expect(log.filter((e) => e.type === 'question')).toHaveLength(1);

    await stack.answer(question.id, { text: 'yes' });
    await stack.waitForStatus(runId, 'finished');
    expect(fake.requests).toHaveLength(2);
    expect(fake.violations).toEqual([]);
  });
});
