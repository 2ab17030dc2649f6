import { askerAgent } from '../support/agents';
import { TestStack, writeAgents } from '../support/stack';
import { waitFor } from '../support/wait-for';

describe('one answer, once', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await TestStack.start({ agentsDir: writeAgents([askerAgent('asker'), askerAgent('hasty', 1)]) });
  });

  afterAll(() => stack.close());

  it('20 concurrent answers: one 200, nineteen 409, and the model sees one tool_result', async () => {
    const runId = await stack.startRun('asker');
    const question = await stack.waitForQuestion(runId);
    const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => stack.answer(question.id, { text: `answer ${i}` })));
    const won = replies.filter((r) => r.status === 200);
    const lost = replies.filter((r) => r.status === 409);
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(19);
    const winner = won[0].body.interaction.answer.text as string;
    for (const reply of lost) {
      expect(reply.body.error).toMatchObject({ code: 'conflict', message: expect.stringContaining('alice') });
    }
    const { run } = await stack.waitForStatus(runId, 'finished');
    expect(run.summary).toBe(`got: ${winner}`);
    const log = await stack.log(runId);
    expect(log.filter((e) => e.type === 'answer')).toHaveLength(1);
  });

  it('over socket.io too: concurrent answers from two clients resolve once', async () => {
    const runId = await stack.startRun('asker');
    const question = await stack.waitForQuestion(runId);
    const [a, b] = [await stack.connect(), await stack.connect(stack.token({ sub: 'bob', role: 'admin' }))];
    const acks = await Promise.all([a.answer(question.id, { text: 'from a' }), b.answer(question.id, { text: 'from b' })]);
    a.close();
    b.close();
    expect(acks.filter((ack) => ack.ok === true)).toHaveLength(1);
    expect(acks.filter((ack) => ack.error?.code === 'conflict')).toHaveLength(1);
    await stack.waitForStatus(runId, 'finished');
  });

  it('an answer racing the deadline: exactly one resolution, delivered once', async () => {
    const outcomes: string[] = [];
    for (let i = 0; i < 6; i++) {
      const runId = await stack.startRun('hasty');
      const question = await stack.waitForQuestion(runId);
      // Aim each answer at a slightly different point around the deadline.
      const target = Date.parse(question.deadline) - 60 + i * 25;
      await waitFor(() => Date.now() >= target, { intervalMs: 1 });
      const reply = await stack.answer(question.id, { text: 'just in time?' });
      const { run } = await stack.waitForStatus(runId, 'finished');
      const answers = (await stack.log(runId)).filter((e) => e.type === 'answer');
      expect(answers).toHaveLength(1);
      if (reply.status === 200) {
        expect(answers[0].outcome).toBe('answered');
        expect(run.summary).toBe('got: just in time?');
      } else {
        expect(reply.status).toBe(409);
        expect(answers[0].outcome).toBe('expired');
        expect(run.summary).toContain('no answer');
      }
      outcomes.push(answers[0].outcome);
      const events = (await stack.http('GET', `/v1/runs/${runId}/events`)).body.events as any[];
      expect(events.filter((e) => e.type === 'interaction.resolved')).toHaveLength(1);
    }
    expect(outcomes).toHaveLength(6);
  });
});
