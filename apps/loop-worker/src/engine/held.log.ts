import { createHash } from 'node:crypto';
import type { LogEntry } from '@parley/contracts';
import type { ParleyStore } from '@parley/store';

/**
 * A run's log as this worker last read it, read a little at a time: a log only grows, so a read
 * fetches the entries added since the last one (answers, messages, appends by this or another
 * worker) instead of the whole log again. The last entry already read is fetched again and
 * compared: if it is not there as it was (Redis restarted from an AOF that lost its last writes),
 * the whole log is read afresh.
 *
 * Two steps hand over what a read would fetch, so the read after them costs no round trip: the
 * lease acquire reads the log in its own step ({@link absorb}), and an append onto a log held whole
 * up to that append is the log as it then stood ({@link appended}).
 */
export class HeldLog {
  private entries: LogEntry[] = [];
  private lastLine: string | null = null;
  private lineBytes = 0;
  /** The entries are the whole log as of this worker's last step on it: the next read is free. */
  private current = false;

  constructor(
    private readonly store: ParleyStore,
    private readonly tenant: string,
    private readonly runId: string,
  ) {}

  /** The log's size as stored (JSON characters): what keeping it costs, about. */
  get bytes(): number {
    return this.lineBytes;
  }

  /** Where a read starts: the last entry held, again, to check it is still there as it was. */
  get readFrom(): number {
    return Math.max(0, this.entries.length - 1);
  }

  async read(): Promise<LogEntry[]> {
    if (this.current) {
      this.current = false;
      return this.entries;
    }
    const from = this.readFrom;
    if (!this.take(await this.store.runs.readLogLines(this.tenant, this.runId, from), from)) {
      return this.read();
    }
    return this.entries;
  }

  /** Lines another step (the lease acquire) read from `from`: when they continue this log, the next read returns them without one. */
  absorb(lines: string[], from: number): void {
    this.current = this.take(lines, from);
  }

  /**
   * This worker appended `entries`; the log then held `length` entries, the one before them with SHA-1
   * `previousSha1`. When that is this log plus them (nobody else appended since its last read, and
   * its last entry is still there as read), they join it here.
   */
  appended(entries: LogEntry[], length: number, previousSha1: string | null): void {
    const lines = entries.map((entry) => JSON.stringify(entry));
    const held = this.lastLine;
    const continues = held === null ? previousSha1 === null : previousSha1 === createHash('sha1').update(held).digest('hex');
    this.current = continues && this.entries.length + lines.length === length && this.take(held === null ? lines : [held, ...lines], this.readFrom);
  }

  /**
   * Takes lines read from `from`. False when they cannot continue what is held: read from elsewhere
   * (another step of the same run read meanwhile), or not starting with the last entry held (the
   * log lost writes: then all is dropped, to be read afresh).
   */
  private take(lines: string[], from: number): boolean {
    if (from !== this.readFrom) {
      return false;
    }
    const known = this.entries.length;
    if (known > 0 && lines[0] !== this.lastLine) {
      this.entries = [];
      this.lastLine = null;
      this.lineBytes = 0;
      this.current = false;
      return false;
    }
    for (const line of known > 0 ? lines.slice(1) : lines) {
      this.entries.push(JSON.parse(line) as LogEntry);
      this.lineBytes += line.length;
    }
    this.lastLine = lines.length > 0 ? lines[lines.length - 1] : this.lastLine;
    return true;
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

  /** Where a read of the run's log held here would start (0 when none is held); the log stays where it is among the recent. */
  readFrom(tenant: string, runId: string): number {
    return this.logs.get(`${tenant}/${runId}`)?.readFrom ?? 0;
  }

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
