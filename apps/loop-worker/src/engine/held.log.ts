import type { LogEntry } from '@parley/contracts';
import type { ParleyStore } from '@parley/store';

/**
 * A run's log as this worker last read it, read a little at a time: a log only grows, so a read
 * fetches the entries added since the last one (answers, messages, appends by this or another
 * worker) instead of the whole log again. The last entry already read is fetched again and
 * compared: if it is not there as it was (Redis restarted from an AOF that lost its last writes),
 * the whole log is read afresh.
 */
export class HeldLog {
  private entries: LogEntry[] = [];
  private lastLine: string | null = null;

  constructor(
    private readonly store: ParleyStore,
    private readonly tenant: string,
    private readonly runId: string,
  ) {}

  get size(): number {
    return this.entries.length;
  }

  async read(): Promise<LogEntry[]> {
    const known = this.entries.length;
    const lines = await this.store.runs.readLogLines(this.tenant, this.runId, Math.max(0, known - 1));
    if (this.entries.length !== known) {
      // Another step of the same run (one whose lease was taken over) read meanwhile.
      return this.read();
    }
    if (known > 0 && lines[0] !== this.lastLine) {
      this.entries = [];
      this.lastLine = null;
      return this.read();
    }
    for (const line of known > 0 ? lines.slice(1) : lines) {
      this.entries.push(JSON.parse(line) as LogEntry);
    }
    this.lastLine = lines.length > 0 ? lines[lines.length - 1] : this.lastLine;
    return this.entries;
  }
}

/**
 * The logs of the runs this worker advanced last, so that the next step of a run (after an answer)
 * reads only what came since. Bounded by runs and by entries; the least recently used go first.
 */
export class RecentLogs {
  private readonly logs = new Map<string, HeldLog>();

  constructor(
    private readonly store: ParleyStore,
    private readonly maxRuns = 500,
    private readonly maxEntries = 50_000,
  ) {}

  of(tenant: string, runId: string): HeldLog {
    const key = `${tenant}/${runId}`;
    const log = this.logs.get(key) ?? new HeldLog(this.store, tenant, runId);
    this.logs.delete(key);
    this.logs.set(key, log);
    let entries = 0;
    this.logs.forEach((held) => (entries += held.size));
    for (const [oldest, held] of this.logs) {
      if (oldest === key || (this.logs.size <= this.maxRuns && entries <= this.maxEntries)) {
        break;
      }
      this.logs.delete(oldest);
      entries -= held.size;
    }
    return log;
  }

  get size(): number {
    return this.logs.size;
  }
}
