import { askerAgent } from '../support/agents';
import { TestStack, writeAgents } from '../support/stack';

const scripted = (name: string, turns: unknown[], maxIterations = 10) => ({
  name,
  model: { provider: 'scripted', turns },
  tools: ['list_files', 'finish'],
  limits: { max_iterations: maxIterations },
});

describe('loop endings are distinct and visible', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await TestStack.start({
      agentsDir: writeAgents([
        askerAgent(),
        scripted('talker', [{ text: 'Nothing to do here.' }]),
        scripted('looper', [{ tool_calls: [{ name: 'list_files' }] }, { tool_calls: [{ name: 'list_files' }] }, { tool_calls: [{ name: 'list_files' }] }], 2),
        scripted('rogue', [{ tool_calls: [{ name: 'delete_everything', input: {} }] }, { tool_calls: [{ name: 'finish', input: { summary: '{{last_answer}}' } }] }]),
      ]),
    });
  });

  afterAll(() => stack.close());

  it('a turn without tool calls ends the run (no_tool_calls) with its text', async () => {
    const { run } = await stack.waitForStatus(await stack.startRun('talker'), 'finished');
    expect(run).toMatchObject({ endReason: 'no_tool_calls', summary: 'Nothing to do here.' });
  });

  it('max_iterations ends the run', async () => {
    const runId = await stack.startRun('looper');
    const { run } = await stack.waitForStatus(runId, 'finished');
    expect(run.endReason).toBe('max_iterations');
    expect((await stack.log(runId)).filter((e) => e.type === 'assistant')).toHaveLength(2);
  });

  it('an unknown tool gets an error result and the run goes on', async () => {
    const { run } = await stack.waitForStatus(await stack.startRun('rogue'), 'finished');
    expect(run.endReason).toBe('finish');
    expect(run.summary).toContain('unknown tool: delete_everything');
  });

  it('cancelling a parked run cancels its question in the same step', async () => {
    const client = await stack.connect();
    await client.subscribe({});
    const runId = await stack.startRun('asker');
    const question = await stack.waitForQuestion(runId);
    const cancelled = await stack.http('POST', `/v1/runs/${runId}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.run).toMatchObject({ status: 'cancelled', endReason: 'cancelled' });
    const event = await client.waitForEvent((e) => e.runId === runId && e.type === 'run.cancelled');
    expect(event.data).toEqual({ reason: 'cancelled', by: { kind: 'user', subject: 'alice', role: 'member' } });
    expect(client.events.find((e) => e.type === 'interaction.resolved' && e.runId === runId)?.data).toMatchObject({ interactionId: question.id, outcome: 'cancelled' });
    const late = await stack.answer(question.id, { text: 'too late' });
    expect(late.status).toBe(409);
    expect(late.body.error.message).toContain('cancelled');
    expect((await stack.http('POST', `/v1/runs/${runId}/cancel`)).status).toBe(409);
    client.close();
  });
});
