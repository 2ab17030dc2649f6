import { createHash } from 'node:crypto';
import type { EventDraft, LogEntry } from '@parley/contracts';
import type { AppendResult, Lease, ParleyStore } from '@parley/store';

/** What the held logs of one worker weigh together, kept as they grow and go (no sum over them per step). */
export interface LogWeight {
  bytes: number;
}

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
    private weight: LogWeight = { bytes: 0 },
  ) {}

  /** The log's size as stored (JSON characters): what keeping it costs, about. */
  get bytes(): number {
    return this.lineBytes;
  }

  /** No longer counted with the others (forgotten by them; a step may still be using it). */
  leave(): void {
    this.weight.bytes -= this.lineBytes;
    this.weight = { bytes: this.lineBytes };
  }

  /** Others wrote to the log since this step's last append (a wake came): the next read reads. */
  stale(): void {
    this.current = false;
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
      this.weight.bytes -= this.lineBytes;
      this.lineBytes = 0;
      this.current = false;
      return false;
    }
    for (const line of known > 0 ? lines.slice(1) : lines) {
      this.entries.push(JSON.parse(line) as LogEntry);
      this.lineBytes += line.length;
      this.weight.bytes += line.length;
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
  private readonly weight: LogWeight = { bytes: 0 };
  /** The log each step in flight works on, by its lease token: the step's own, even once forgotten here. */
  private readonly steps = new Map<string, HeldLog>();

  constructor(
    private readonly store: ParleyStore,
    private readonly maxRuns = 500,
    private readonly maxBytes = 32 * 1024 * 1024,
  ) {}

  /** Where a read of the run's log held here would start (0 when none is held); the log stays where it is among the recent. */
  readFrom(tenant: string, runId: string): number {
    return this.logs.get(`${tenant}/${runId}`)?.readFrom ?? 0;
  }

  /** The run's log for the step that holds `lease`, until {@link stepDone}. */
  forStep(lease: Lease): HeldLog {
    const log = this.of(lease.tenant, lease.runId);
    this.steps.set(lease.token, log);
    return log;
  }

  stepDone(lease: Lease): void {
    this.steps.delete(lease.token);
  }

  /** A wake came for the step's run (an answer, a sub-agent's end): what it wrote is read next, not taken as held. */
  woken(lease: Lease): void {
    this.steps.get(lease.token)?.stale();
  }

  /** Appends to a run's log through the store (as `runs.append`); the step's log takes what it appended. */
  async append(lease: Lease, entry: LogEntry | LogEntry[] | null, events: EventDraft[] = [], enterStage = '', happened = false): Promise<AppendResult> {
    const appended = await this.store.runs.append(lease, entry, events, enterStage, happened);
    const entries = entry === null ? [] : Array.isArray(entry) ? entry : [entry];
    const written = appended.status === 'ok' ? appended : appended.status === 'cancelled' ? appended.recorded : undefined;
    if (written && entries.length > 0) {
      this.steps.get(lease.token)?.appended(entries, written.length, written.previousSha1);
    }
    return appended;
  }

  of(tenant: string, runId: string): HeldLog {
    const key = `${tenant}/${runId}`;
    const log = this.logs.get(key) ?? new HeldLog(this.store, tenant, runId, this.weight);
    this.logs.delete(key);
    this.logs.set(key, log);
    for (const [oldest, held] of this.logs) {
      if (oldest === key || (this.logs.size <= this.maxRuns && this.weight.bytes <= this.maxBytes)) {
        break;
      }
      this.logs.delete(oldest);
      held.leave();
    }
    return log;
  }

  get size(): number {
    return this.logs.size;
  }

  /** What the logs held here weigh together (JSON characters). */
  get bytes(): number {
    return this.weight.bytes;
  }
}
