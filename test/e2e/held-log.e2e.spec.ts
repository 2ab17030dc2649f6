import { ParleyStore } from '@parley/store';
import { quickAgent } from '../support/agents';
import { TestStack, writeAgents } from '../support/stack';

/** Delegates to a sub-agent that finishes at once, then finishes with what it said. */
function delegatingAgents() {
  return [
    {
      name: 'boss',
      model: {
        provider: 'scripted',
        turns: [
          { tool_calls: [{ name: 'delegate', input: { agent: 'helper', task: 'Say hello' } }] },
          { tool_calls: [{ name: 'finish', input: { summary: 'the helper is done' } }] },
        ],
      },
      tools: ['delegate', 'finish'],
      delegates: ['helper'],
      limits: { max_iterations: 5 },
    },
    {
      name: 'helper',
      model: { provider: 'scripted', turns: [{ tool_calls: [{ name: 'finish', input: { summary: 'hello' } }] }] },
      tools: ['finish'],
      limits: { max_iterations: 5 },
    },
  ];
}

describe("the worker's copy of a run's log", () => {
  let stack: TestStack;
  let store: ParleyStore;

  beforeAll(async () => {
    stack = await TestStack.start({ agentsDir: writeAgents([quickAgent(), ...delegatingAgents()]) });
    store = stack.worker!.get(ParleyStore, { strict: false });
  });

  afterAll(() => stack.close());

  it('a run that only runs tools reads its log in its lease step and never again: its tool results are held as appended', async () => {
    const reads = jest.spyOn(store.runs, 'readLogLines');
    try {
      const runId = await stack.startRun('quick');
      const { run } = await stack.waitForStatus(runId, 'finished');
      expect(run.summary).toBe('wrote out.txt');
      expect((await stack.log(runId)).map((entry: { type: string }) => entry.type)).toEqual(['task', 'assistant', 'tool_result', 'assistant', 'tool_result']);
      expect(reads.mock.calls.filter(([, id]) => id === runId)).toEqual([]);
    } finally {
      reads.mockRestore();
    }
  });

  it("a sub-agent that ends before its parent parks wakes the parent, whose next pass reads the child's result from the log", async () => {
    const real = store.runs.park.bind(store.runs);
    const park = jest.spyOn(store.runs, 'park');
    // The parent's park on its child waits until the child has ended: its result and wake are in
    // before the park, which then answers "continue" (the parent is still running).
    park.mockImplementationOnce(async (lease, waitReason, pendingId, ...rest) => {
      await stack.waitForStatus(pendingId, 'finished');
      return real(lease, waitReason, pendingId, ...rest);
    });
    try {
      const runId = await stack.startRun('boss');
      const { run } = await stack.waitForStatus(runId, 'finished');
      expect(run.summary).toBe('the helper is done');
      expect(park.mock.calls[0].slice(0, 2)).toEqual([expect.objectContaining({ runId }), 'child']);
      await expect(park.mock.results[0].value).resolves.toEqual({ status: 'continue' });
      const log = await stack.log(runId);
      expect(log.map((entry: { type: string }) => entry.type)).toEqual(['task', 'assistant', 'child', 'child_result', 'tool_result', 'assistant', 'tool_result']);
    } finally {
      park.mockRestore();
    }
  });
});
