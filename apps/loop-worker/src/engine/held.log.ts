import type { LogEntry } from '@parley/contracts';
import type { ParleyStore } from '@parley/store';

/**
 * The log of a run this worker holds, read a little at a time: a log only grows, so each pass
 * reads the entries added since the last one (answers, messages, this worker's own appends)
 * instead of the whole log again. The last entry already read is read again and compared: if it
 * is not there as it was (Redis restarted from an AOF that lost its last writes), the whole log is
 * read afresh.
 */
export class HeldLog {
  private entries: LogEntry[] = [];
  private lastLine: string | null = null;

  constructor(
    private readonly store: ParleyStore,
    private readonly tenant: string,
    private readonly runId: string,
  ) {}

  async read(): Promise<LogEntry[]> {
    const known = this.entries.length;
    const lines = await this.store.runs.readLogLines(this.tenant, this.runId, Math.max(0, known - 1));
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
