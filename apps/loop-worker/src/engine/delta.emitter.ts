import type { Lease, RunRepository } from '@parley/store';

/**
 * Streams model text to clients as `message.delta` events, coalesced so a fast model costs one
 * event per interval instead of one per token. The log keeps only the final message.
 */
export class DeltaEmitter {
  private pending = '';
  private timer: NodeJS.Timeout | null = null;
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly runs: RunRepository,
    private readonly lease: Lease,
    private readonly intervalMs = 40,
  ) {}

  push(text: string): void {
    this.pending += text;
    this.timer ??= setTimeout(() => this.flush(), this.intervalMs);
  }

  /** Sends what is buffered and waits until every delta so far is written. */
  async drain(): Promise<void> {
    this.flush();
    await this.chain;
  }

  private flush(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (!this.pending) {
      return;
    }
    const text = this.pending;
    this.pending = '';
    // A lost lease shows up at the next fenced append of the loop; deltas are best effort.
    this.chain = this.chain.then(async () => {
      await this.runs.append(this.lease, null, [{ type: 'message.delta', data: { text } }]).catch(() => undefined);
    });
  }
}
