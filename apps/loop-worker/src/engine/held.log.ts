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
  private lineBytes = 0;

  constructor(
    private readonly store: ParleyStore,
    private readonly tenant: string,
    private readonly runId: string,
  ) {}

  /** The log's size as stored (JSON characters): what keeping it costs, about. */
  get bytes(): number {
    return this.lineBytes;
  }

  async read(): Promise<LogEntry[]> {
    const known = this.entries.length;
    const lines = await this.store.runs.readLogLines(this.tenant, this.runId, Math.max(0, known - 1));
    // Also the case when another step of the same run (one whose lease was taken over) read meanwhile.
    if (known > 0 && lines[0] !== this.lastLine) {
      this.entries = [];
      this.lastLine = null;
      this.lineBytes = 0;
      return this.read();
    }
    for (const line of known > 0 ? lines.slice(1) : lines) {
      this.entries.push(JSON.parse(line) as LogEntry);
      this.lineBytes += line.length;
    }
    this.lastLine = lines.length > 0 ? lines[lines.length - 1] : this.lastLine;
    return this.entries;
  }
}

/**
 * The logs of the runs this worker advanced last, so that the next step of a run (after an answer)
 * reads only what came since. Bounded by runs and by size (a log can hold large tool results); the
 * least recently used go first, the run asked for stays.
 */
export class RecentLogs {
  private readonly logs = new Map<string, HeldLog>();

  constructor(
    private readonly store: ParleyStore,
    private readonly maxRuns = 500,
    private readonly maxBytes = 32 * 1024 * 1024,
  ) {}

  of(tenant: string, runId: string): HeldLog {
    const key = `${tenant}/${runId}`;
    const log = this.logs.get(key) ?? new HeldLog(this.store, tenant, runId);
    this.logs.delete(key);
    this.logs.set(key, log);
    let bytes = 0;
    this.logs.forEach((held) => (bytes += held.bytes));
    for (const [oldest, held] of this.logs) {
      if (oldest === key || (this.logs.size <= this.maxRuns && bytes <= this.maxBytes)) {
        break;
      }
      this.logs.delete(oldest);
      bytes -= held.bytes;
    }
    return log;
  }

  get size(): number {
    return this.logs.size;
  }
}
