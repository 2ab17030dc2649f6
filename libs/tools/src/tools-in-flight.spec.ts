import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { waitFor } from '../../../test/support/wait-for';
import { ToolsInFlight } from './tools-in-flight';

describe('ToolsInFlight', () => {
  it('knows when the last running call must be over, and forgets a call once it ends', () => {
    const calls = new ToolsInFlight();
    expect(calls.lastDeadline()).toBe(0);
    const shortOne = calls.begin(1_000);
    const longOne = calls.begin(60_000);
    expect(calls.lastDeadline()).toBeGreaterThanOrEqual(Date.now() + 59_000);
    longOne();
    expect(calls.lastDeadline()).toBeLessThanOrEqual(Date.now() + 1_000);
    shortOne();
    expect(calls.lastDeadline()).toBe(0);
  });

  it('waits only for the calls begun by the time it is told, once told', () => {
    const calls = new ToolsInFlight();
    calls.begin(30_000);
    calls.waitOnlyForCallsBegunBy(Date.now());
    // Begun after it: a turn's next call during a shutdown.
    jest.useFakeTimers({ now: Date.now() + 5_000 });
    try {
      calls.begin(600_000);
      expect(calls.lastDeadline()).toBeLessThan(Date.now() + 30_000);
    } finally {
      jest.useRealTimers();
    }
  });

  it('kills the process group of a running shell command, what it started in the background included', async () => {
    const calls = new ToolsInFlight();
    const child = spawn('/bin/sh', ['-c', 'sleep 30 & sleep 30'], { detached: true, stdio: 'ignore' });
    calls.begin(60_000, child.pid);
    const exited = once(child, 'exit');
    calls.killGroups();
    expect(await exited).toEqual([null, 'SIGKILL']);
    // The background sleep shared the group: nothing of it is left (once init has reaped it).
    const groupGone = (): boolean => {
      try {
        process.kill(-child.pid!, 0);
        return false;
      } catch (error) {
        return (error as NodeJS.ErrnoException).code === 'ESRCH';
      }
    };
    await waitFor(groupGone, { message: 'the process group to be gone' });
  });
});
