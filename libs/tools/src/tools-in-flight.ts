/** One running tool call: when it began and must be over (epoch ms), and its process group, if it has one. */
interface RunningCall {
  began: number;
  until: number;
  group?: number;
}

/**
 * The tool calls this process runs now. A stopping loop-worker waits until the last must be over
 * (their results are recorded, not cut off); should the process exit first anyway, the process
 * groups of its shell commands are killed with it, so no command of a run keeps running unwatched
 * beside the retry another worker makes.
 */
export class ToolsInFlight {
  private readonly calls = new Set<RunningCall>();
  private waitsFor = Infinity;

  /** A call that runs for at most `timeoutMs`; the returned function ends it. */
  begin(timeoutMs: number, group?: number): () => void {
    const began = Date.now();
    const call: RunningCall = { began, until: began + timeoutMs, ...(group === undefined ? {} : { group }) };
    this.calls.add(call);
    return () => this.calls.delete(call);
  }

  /**
   * From now on, {@link lastDeadline} counts only the calls begun by `time` (epoch ms): a stopping
   * worker waits for the calls of its grace period, not for each one a turn starts after it.
   */
  waitOnlyForCallsBegunBy(time: number): void {
    this.waitsFor = time;
  }

  /** When the last running call that is waited for must be over (epoch ms); 0 when none. */
  lastDeadline(): number {
    let last = 0;
    this.calls.forEach((call) => {
      if (call.began <= this.waitsFor) {
        last = Math.max(last, call.until);
      }
    });
    return last;
  }

  /** Kills the process group of every running shell command (synchronous: safe in an `exit` handler). */
  killGroups(): void {
    this.calls.forEach((call) => {
      if (call.group !== undefined) {
        try {
          process.kill(-call.group, 'SIGKILL');
        } catch {
          // ESRCH: the group is already gone.
        }
      }
    });
  }
}

/** This process's running tool calls (the tools register themselves). */
export const toolsInFlight = new ToolsInFlight();
