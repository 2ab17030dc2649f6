/**
 * A loop-worker (a process of its own) running more steps at once than Node's default listener
 * bound (10): each step listens to the worker's shutdown signal, which must not read as a leak.
 */
import { Harness } from '../harness/harness';
import { waitFor } from '../support/wait-for';

const STEPS = 14;

const napper = {
  name: 'napper',
  model: { provider: 'scripted', turns: [{ tool_calls: [{ name: 'shell', input: { command: 'sleep 1' } }] }, { tool_calls: [{ name: 'finish', input: { summary: 'rested' } }] }] },
  tools: ['shell', 'finish'],
  permissions: { shell: 'allow' },
  limits: { max_iterations: 4 },
};

describe('a loop-worker with many steps at once', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await Harness.start({ name: 'concurrency', agents: [napper], env: { PARLEY_WORKER_CONCURRENCY: String(STEPS + 2), PARLEY_LIMIT_RUNS_PER_MINUTE_PER_USER: '0' } });
  });

  afterAll(async () => {
    await h?.close();
  });

  it(`runs ${STEPS} steps at once without a listener-leak warning`, async () => {
    const runs = await Promise.all(Array.from({ length: STEPS }, (_, n) => h.startRun(1, 'napper', `nap ${n}`)));
    // All of them in their step at once: each one's shell call is running.
    await waitFor(async () => (await Promise.all(runs.map((runId) => h.runLog(runId)))).every((log) => log.some((e) => e.type === 'assistant')), { message: 'every run in its step' });
    await waitFor(async () => (await Promise.all(runs.map((runId) => h.runHash(runId)))).every((run) => run.status === 'finished'), { message: 'every run to finish' });
    expect(h.worker(1).tail(10_000)).not.toContain('MaxListenersExceededWarning');
  });
});
