import { ParleyStore } from '@parley/store';
import { askerAgent, quickAgent } from '../support/agents';
import { TestStack, writeAgents } from '../support/stack';
import { waitFor } from '../support/wait-for';

/** Active timers and handles of this process (the services run in it). */
function resources(): { total: number; timers: number } {
  const info = process.getActiveResourcesInfo();
  return { total: info.length, timers: info.filter((kind) => kind === 'Timeout').length };
}

describe('parking holds nothing', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await TestStack.start({ agentsDir: writeAgents([askerAgent(), quickAgent()]), overrides: { workerConcurrency: 1, limitUserRunsPerMinute: 0 } });
  });

  afterAll(() => stack.close());

  const waitingCount = async () => (await stack.http('GET', '/v1/runs?status=waiting&limit=500')).body.runs.length as number;

  it('with one worker slot, 50 parked runs leave room for a 51st, and no timer or handle grows with them', async () => {
    const first: string[] = [];
    for (let i = 0; i < 5; i++) {
      first.push(await stack.startRun('asker'));
    }
    await waitFor(async () => (await waitingCount()) === 5, { message: '5 parked runs' });
    const before = resources();

    // One at a time, so the test's own HTTP client reuses one keep-alive connection.
    const rest: string[] = [];
    for (let i = 0; i < 45; i++) {
      rest.push(await stack.startRun('asker'));
    }
    await waitFor(async () => (await waitingCount()) === 50, { timeoutMs: 30_000, message: '50 parked runs' });
    const after = resources();
    expect(after.timers - before.timers).toBeLessThan(5);
    expect(after.total - before.total).toBeLessThan(10);

    const quick = await stack.startRun('quick');
    const done = await stack.waitForStatus(quick, 'finished');
    expect(done.run.summary).toBe('wrote out.txt');

    const parked = [...first, ...rest];
    for (const runId of parked) {
      const { interaction } = await stack.run(runId);
      expect((await stack.answer(interaction.id, { text: `answer for ${runId}` })).status).toBe(200);
    }
    for (const runId of parked) {
      const { run } = await stack.waitForStatus(runId, 'finished');
      expect(run.summary).toBe(`got: answer for ${runId}`);
    }
  });

  it('a model turn that only asks reaches a client as its message, its tool call, the opened question and the wait, in that order', async () => {
    const client = await stack.connect();
    const appends = jest.spyOn(stack.worker!.get(ParleyStore, { strict: false }).runs, 'append');
    try {
      await client.subscribe();
      const runId = await stack.startRun('asker');
      await client.waitForEvent((e) => e.runId === runId && e.type === 'run.status' && (e.data as { status?: string }).status === 'waiting', 'the wait');
      const seen = client.events.filter((e) => e.runId === runId && e.type !== 'message.delta');
      expect(seen.map((e) => (e.type === 'run.status' ? `run.status ${(e.data as { status: string }).status}` : e.type))).toEqual([
        'run.created',
        'run.status queued',
        'run.status running',
        'message',
        'tool.call',
        'interaction.opened',
        'run.status waiting',
      ]);
      const log = await stack.log(runId);
      expect(log.map((entry: { type: string }) => entry.type)).toEqual(['task', 'assistant', 'question']);
      // The turn went into the park step: no append of its own (only the streamed deltas, which write no entry).
      expect(appends.mock.calls.filter(([lease, entry]) => lease.runId === runId && entry !== null)).toEqual([]);
    } finally {
      appends.mockRestore();
      client.close();
    }
  });
});
