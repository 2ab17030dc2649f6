import { io, type Socket } from 'socket.io-client';
import type { AnswerBody, ParleyEvent } from '@parley/contracts';
import { waitFor } from '../support/wait-for';

export interface EventClientOptions {
  name?: string;
  token: string;
  /** Gateways it may move to after a drop, evaluated at each reconnect (e.g. the running ones). */
  urls: () => string[];
  /** `since` of the first subscribe; left out, the client gets live events only. */
  since?: number;
  /** Reconnect to another gateway after a drop. @defaultValue true */
  failover?: boolean;
  /** Awaited before each reconnect: a test can let events happen while the client is away. */
  beforeReconnect?: () => Promise<void>;
  /** @defaultValue 30000 */
  reconnectTimeoutMs?: number;
}

export interface Reconnect {
  from: string;
  to: string;
  /** The `since` it subscribed with on the new gateway. */
  since: number;
  /** Ms from the drop to the new subscription's ack. */
  tookMs: number;
}

/**
 * A socket.io client as an application would write one: it subscribes, records every event it
 * receives (duplicates included, so a test can see them), and when its gateway goes away it
 * connects to another and subscribes again with `since` = the last sequence number it covered.
 */
export class EventClient {
  readonly name: string;
  readonly events: ParleyEvent[] = [];
  readonly reconnects: Reconnect[] = [];
  readonly errors: string[] = [];
  url = '';
  /** The last sequence number this client has covered (events received, or the last ack). */
  lastSeq = 0;
  private socket?: Socket;
  private closed = false;
  private dropped = false;

  constructor(private readonly options: EventClientOptions) {
    this.name = options.name ?? 'client';
  }

  get connected(): boolean {
    return !this.dropped && this.socket?.connected === true;
  }

  /** Connects to `url` and subscribes (with `since` when given); resolves after the ack. */
  async connect(url: string, since?: number): Promise<void> {
    const socket = await open(url, this.options.token);
    this.attach(socket, url);
    await this.subscribe(since);
  }

  async answer(interactionId: string, answer: AnswerBody): Promise<any> {
    return this.socket!.timeout(10_000).emitWithAck('answer', { interactionId, answer });
  }

  seqs(): number[] {
    return this.events.map((event) => event.seq);
  }

  /**
   * Sequence numbers received more than once, and those of `stored` (the tenant's stream, in order)
   * missing after the first received, up to the last covered (received, or acked): seqs are not consecutive.
   */
  gapsAndDuplicates(stored: number[]): { gaps: number[]; duplicates: number[] } {
    const seen = new Set<number>();
    const duplicates: number[] = [];
    for (const seq of this.seqs()) {
      if (seen.has(seq)) {
        duplicates.push(seq);
      }
      seen.add(seq);
    }
    const first = this.seqs().reduce((lowest, seq) => Math.min(lowest, seq), Infinity);
    const gaps = stored.filter((seq) => seq > first && seq <= this.lastSeq && !seen.has(seq));
    return { gaps, duplicates };
  }

  waitForSeq(seq: number, timeoutMs = 20_000): Promise<boolean> {
    return waitFor(() => this.lastSeq >= seq, { timeoutMs, message: `${this.name} to reach seq ${seq} (at ${this.lastSeq})` });
  }

  waitForEvent(predicate: (event: ParleyEvent) => boolean, message = 'an event', timeoutMs = 20_000): Promise<ParleyEvent> {
    return waitFor(() => this.events.find(predicate), { timeoutMs, message: `${this.name}: ${message}` }) as Promise<ParleyEvent>;
  }

  /** Resolves once the client has noticed that its gateway is gone. */
  waitForDrop(timeoutMs = 10_000): Promise<boolean> {
    return waitFor(() => this.dropped, { timeoutMs, message: `${this.name} to notice its gateway is gone` });
  }

  describe(): string {
    const moves = this.reconnects.map((r) => `${r.from} -> ${r.to} since ${r.since} in ${r.tookMs} ms`).join('; ');
    return `${this.name} on ${this.url} (${this.connected ? 'connected' : 'not connected'}), ${this.events.length} events, last seq ${this.lastSeq}${moves ? `, moved ${moves}` : ''}${this.errors.length ? `, errors: ${this.errors.join('; ')}` : ''}`;
  }

  close(): void {
    this.closed = true;
    this.socket?.disconnect();
  }

  private attach(socket: Socket, url: string): void {
    this.socket = socket;
    this.url = url;
    this.dropped = false;
    socket.on('event', (event: ParleyEvent) => {
      this.events.push(event);
      this.lastSeq = Math.max(this.lastSeq, event.seq);
    });
    socket.once('disconnect', (reason) => {
      if (this.closed || reason === 'io client disconnect') {
        return;
      }
      this.dropped = true;
      if (this.options.failover ?? true) {
        this.failover(url).catch((error: unknown) => this.errors.push(`failover: ${String(error)}`));
      }
    });
  }

  private async subscribe(since: number | undefined): Promise<void> {
    const ack = await this.socket!.timeout(10_000).emitWithAck('subscribe', since === undefined ? {} : { since });
    if (!ack?.ok) {
      throw new Error(`${this.name}: subscribe refused: ${JSON.stringify(ack)}`);
    }
    this.lastSeq = Math.max(this.lastSeq, Number(ack.lastSeq));
  }

  private async failover(from: string): Promise<void> {
    const droppedAt = Date.now();
    await this.options.beforeReconnect?.();
    const deadline = Date.now() + (this.options.reconnectTimeoutMs ?? 30_000);
    while (!this.closed) {
      // Another gateway first; the same one again last (it may have been restarted).
      const urls = this.options.urls();
      const candidates = [...urls.filter((u) => u !== from), ...urls.filter((u) => u === from)];
      for (const url of candidates) {
        try {
          const socket = await open(url, this.options.token);
          if (this.closed) {
            socket.disconnect();
            return;
          }
          const since = this.lastSeq;
          this.attach(socket, url);
          await this.subscribe(since);
          this.reconnects.push({ from, to: url, since, tookMs: Date.now() - droppedAt });
          return;
        } catch (error) {
          this.errors.push(`reconnect to ${url}: ${String(error)}`);
        }
      }
      if (Date.now() > deadline) {
        throw new Error(`no gateway took ${this.name} back within ${this.options.reconnectTimeoutMs ?? 30_000} ms`);
      }
      // A reconnect back-off, not a test wait.
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

function open(url: string, token: string): Promise<Socket> {
  const socket = io(`${url}/v1`, { auth: { token }, transports: ['websocket'], reconnection: false, forceNew: true, timeout: 5000 });
  return new Promise((resolve, reject) => {
    socket.once('connect', () => resolve(socket));
    socket.once('connect_error', (error) => {
      socket.disconnect();
      reject(error);
    });
  });
}
