import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Harness } from '../harness/harness';
import { waitFor } from '../support/wait-for';

/**
 * A loop-worker stopped (SIGTERM) while a shell command runs longer than its grace period waits for
 * the command, up to the tool's own timeout, records its result and exits: the command runs once,
 * to its end, and is not started again by the worker that takes the run on.
 */
describe('a loop-worker stopped while a tool call outlives its grace period', () => {
  const dir = mkdtempSync(join(tmpdir(), 'parley-shutdown-tools-'));
  const marker = join(dir, 'marker');
  let h: Harness;

  beforeAll(async () => {
    h = await Harness.start({
      name: 'shutdown-tools',
      workers: 2,
      agents: [
        {
          name: 'sleeper',
          model: {
            provider: 'scripted',
            turns: [{ tool_calls: [{ name: 'shell', input: { command: `echo start >> ${marker}; sleep 8; echo end >> ${marker}` } }] }, { tool_calls: [{ name: 'finish', input: { summary: 'slept' } }] }],
          },
          tools: ['shell', 'finish'],
          permissions: { shell: 'allow' },
          shell: { timeout_secs: 60 },
        },
      ],
      // The command outlives the grace period and the 5 s a close adds to it.
      env: { PARLEY_SHUTDOWN_GRACE_MS: '1000' },
    });
  });
  afterAll(async () => {
    await h?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const lines = (): string[] => {
    try {
      return readFileSync(marker, 'utf8').split('\n').filter(Boolean);
    } catch {
      return [];
    }
  };

  it('waits for the command, records its result, and the command runs once', () =>
    h.diagnose(async () => {
      const runId = await h.startRun(1, 'sleeper', 'sleep on it');
      await waitFor(() => lines().includes('start'), { message: 'the command to start' });
      const holder = h.workerById((await h.runHash(runId)).worker);
      const mark = holder.lineMark;

      expect(await holder.stop(60_000)).toBe('stopped');
      // Its log says it is stopping (read after its exit, maybe).
      await holder.waitForLine((line) => line.includes('stopping: no new jobs'), { after: mark });
      // It exited after the command ended, not before.
      expect(lines()).toEqual(['start', 'end']);

      await waitFor(async () => (await h.runHash(runId)).status === 'finished', { timeoutMs: 30_000, message: 'the run to finish' });
      const results = (await h.runLog(runId)).filter((entry) => entry.type === 'tool_result' && entry.name === 'shell');
      expect(results).toHaveLength(1);
      expect(lines()).toEqual(['start', 'end']);
    }));
});
