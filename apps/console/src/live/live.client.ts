import { io, type Socket } from 'socket.io-client';
import type { ErrorBody, ParleyEvent } from '../api/types';

export type ConnectionState = 'connecting' | 'live' | 'reconnecting' | 'refused';

export interface LiveStatus {
  state: ConnectionState;
  /** Why the gateway refused the connection (bad token, tenant limit), when it did. */
  problem?: string;
}

type Listener = (event: ParleyEvent) => void;
type ResyncListener = () => void;

type SubscribeAck = { ok: true; lastSeq: number } | ErrorBody;

/**
 * The console's one socket.io connection (namespace /v1). Every (re)connect subscribes again from
 * the last sequence number seen, so a dropped connection or a restarted gateway replays what was
 * missed; events at or below that number are dropped, so nothing is shown twice.
 */
export class LiveClient {
  private readonly socket: Socket;
  private lastSeq: number | undefined;
  private readonly listeners = new Set<Listener>();
  private readonly resyncListeners = new Set<ResyncListener>();
  private readonly statusListeners = new Set<(status: LiveStatus) => void>();
  private current: LiveStatus = { state: 'connecting' };
  private everConnected = false;
  private reconnectLater: number | undefined;

  constructor(token: string) {
    this.socket = io('/v1', { auth: { token }, reconnectionDelayMax: 2000 });
    this.socket.on('event', (event: ParleyEvent) => this.receive(event));
    this.socket.on('connect', () => void this.subscribe());
    this.socket.on('disconnect', (reason) => {
      this.setStatus({ state: 'reconnecting' });
      if (reason === 'io server disconnect') {
        // A gateway shutting down may close the namespace itself; socket.io would then not retry.
        this.reconnectLater = window.setTimeout(() => this.socket.connect(), 1000);
      }
    });
    this.socket.on('connect_error', (error: Error & { data?: ErrorBody }) => {
      if (this.socket.active) {
        // A transport failure (gateway down or restarting): socket.io retries on its own.
        this.setStatus({ state: this.everConnected ? 'reconnecting' : 'connecting' });
        return;
      }
      // Refused by the gateway (bad token, too many connections): it will not retry by itself.
      this.setStatus({ state: 'refused', problem: error.data?.error.message ?? error.message });
    });
  }

  get status(): LiveStatus {
    return this.current;
  }

  /** The last sequence number the console has processed (undefined before the first subscribe). */
  get seq(): number | undefined {
    return this.lastSeq;
  }

  onEvent(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Called after every successful (re)subscribe, when views may want to reload what they show. */
  onResync(listener: ResyncListener): () => void {
    this.resyncListeners.add(listener);
    return () => this.resyncListeners.delete(listener);
  }

  onStatus(listener: (status: LiveStatus) => void): () => void {
    this.statusListeners.add(listener);
    return () => this.statusListeners.delete(listener);
  }

  retry(): void {
    this.setStatus({ state: 'connecting' });
    if (this.socket.connected) {
      // Connected, but the subscribe was refused (a Redis error at the gateway): ask again.
      void this.subscribe();
      return;
    }
    this.socket.connect();
  }

  close(): void {
    window.clearTimeout(this.reconnectLater);
    this.socket.removeAllListeners();
    this.socket.disconnect();
    this.listeners.clear();
    this.resyncListeners.clear();
    this.statusListeners.clear();
  }

  private async subscribe(): Promise<void> {
    try {
      const ack = (await this.socket.timeout(15_000).emitWithAck('subscribe', this.lastSeq === undefined ? {} : { since: this.lastSeq })) as SubscribeAck;
      if ('error' in ack) {
        this.setStatus({ state: 'refused', problem: ack.error.message });
        return;
      }
      // Replayed events arrived before the ack; the ack covers everything up to its lastSeq.
      this.lastSeq = Math.max(this.lastSeq ?? 0, ack.lastSeq);
      this.everConnected = true;
      this.setStatus({ state: 'live' });
      this.resyncListeners.forEach((listener) => listener());
    } catch {
      // No ack in time: drop the connection and let socket.io reconnect and subscribe again.
      this.socket.disconnect().connect();
    }
  }

  private receive(event: ParleyEvent): void {
    if (this.lastSeq !== undefined && event.seq <= this.lastSeq) {
      return;
    }
    this.lastSeq = event.seq;
    this.listeners.forEach((listener) => listener(event));
  }

  private setStatus(status: LiveStatus): void {
    this.current = status;
    this.statusListeners.forEach((listener) => listener(status));
  }
}
