import { io, type Socket } from 'socket.io-client';
import { z } from 'zod';
import { InteractionSchema, SOCKET, type AnswerBody, type Interaction, type SubscribeMessage } from '@parley/contracts';
import { ApiError, ReceivedErrorBodySchema } from './api.error';
import { RawEventSchema, type RawEvent } from './event.parse';

const ACK_TIMEOUT_MS = 15_000;
/** Before the first connection succeeds, failing this often means the gateway is not there at all. */
const MAX_INITIAL_ATTEMPTS = 3;
/**
 * Handshake refusals that a later attempt may not meet: the tenant is at its socket limit, or the
 * gateway had a fault (Redis, a key set it could not fetch). Anything else (a bad token) is final.
 */
const RETRYABLE_REFUSALS: ReadonlySet<string> = new Set(['rate_limited', 'unavailable', 'internal']);
const DEFAULT_RETRY_DELAY = { firstMs: 1000, maxMs: 30_000 };
const DEFAULT_MAX_REFUSALS = 20;

const RetryAfterSchema = z.object({ retryAfterSecs: z.number().min(0) });

const AnswerAckSchema = z.object({ ok: z.literal(true), interaction: InteractionSchema });
// `truncated`: events after `since` were trimmed from the stream (gateways before 2026-11-30 do not say).
const SubscribeAckSchema = z.object({ ok: z.literal(true), lastSeq: z.number(), truncated: z.boolean().optional() });

export interface EventStreamOptions {
  baseUrl: string;
  token: string;
  /** Only this run's events; all of the tenant's visible events when absent. */
  runId?: string;
  /** Replay starts after this sequence number (0 = from the beginning). */
  since: number;
  onEvent: (event: RawEvent) => void;
  /** Connection trouble that the stream is handling itself (reconnecting, ...). */
  onNotice: (message: string) => void;
  /** The stream gave up; it is closed when this is called. */
  onFatal: (error: Error) => void;
  /** The gateway accepted a subscription (on each connection). */
  onSubscribed?: () => void;
  ackTimeoutMs?: number;
  /** Backoff after a retryable refusal: doubles from `firstMs` up to `maxMs` (the gateway's retryAfterSecs wins when longer). */
  retryDelay?: { firstMs: number; maxMs: number };
  /** Retryable refusals in a row after which the stream gives up (default 20: about 8 minutes). */
  maxRefusals?: number;
}

/** The socket cannot carry a request right now; the caller should use HTTP instead. */
export class StreamUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StreamUnavailableError';
  }
}

/**
 * Follows events over socket.io. socket.io reconnects by itself; each (re)connection subscribes
 * again from the last sequence number delivered, and anything at or below it is dropped, so the
 * consumer sees every event exactly once and in order.
 */
export class EventStream {
  private readonly socket: Socket;
  private readonly ackTimeoutMs: number;
  private lastSeq: number;
  private connectedOnce = false;
  private failedAttempts = 0;
  private troubleReported = false;
  private closed = false;
  private serverMessage?: string;
  private refusals = 0;
  private refusalReported = false;
  private retryTimer?: NodeJS.Timeout;

  constructor(private readonly options: EventStreamOptions) {
    this.lastSeq = options.since;
    this.ackTimeoutMs = options.ackTimeoutMs ?? ACK_TIMEOUT_MS;
    const url = new URL(options.baseUrl);
    const prefix = url.pathname.replace(/\/+$/, '');
    this.socket = io(`${url.origin}${SOCKET.namespace}`, {
      path: `${prefix}/socket.io`,
      auth: { token: options.token },
      // Polling would need sticky sessions across gateway replicas.
      transports: ['websocket'],
      reconnectionDelay: 500,
      reconnectionDelayMax: 5000,
    });
    this.socket.on('connect', () => this.subscribe());
    this.socket.on(SOCKET.event, (raw: unknown) => this.receive(raw));
    this.socket.on('connect_error', (error: Error) => this.connectFailed(error));
    this.socket.on('disconnect', (reason: Socket.DisconnectReason) => this.disconnected(reason));
    this.socket.on('exception', (payload: unknown) => this.rememberServerMessage(payload));
    this.socket.on('error', (payload: unknown) => this.rememberServerMessage(payload));
  }

  /** The last sequence number delivered to onEvent (or `since`). */
  get seq(): number {
    return this.lastSeq;
  }

  /** Sends an answer over the socket; throws ApiError for an error ack, StreamUnavailableError when it cannot tell. */
  async answer(interactionId: string, answer: AnswerBody): Promise<Interaction> {
    if (this.closed || !this.socket.connected) {
      throw new StreamUnavailableError('not connected');
    }
    let ack: unknown;
    try {
      ack = await this.socket.timeout(this.ackTimeoutMs).emitWithAck(SOCKET.answer, { interactionId, answer });
    } catch {
      throw new StreamUnavailableError('the answer was not acknowledged');
    }
    const failure = ReceivedErrorBodySchema.safeParse(ack);
    if (failure.success) {
      throw ApiError.fromBody(failure.data);
    }
    const success = AnswerAckSchema.safeParse(ack);
    if (!success.success) {
      throw new ApiError(0, 'bad_response', 'unexpected acknowledgement of an answer');
    }
    return success.data.interaction;
  }

  close(): void {
    if (this.closed) {
      return;
    }
    this.closed = true;
    clearTimeout(this.retryTimer);
    this.socket.disconnect();
  }

  private subscribe(): void {
    if (this.connectedOnce) {
      this.options.onNotice(`reconnected; resuming after event #${this.lastSeq}`);
    }
    this.connectedOnce = true;
    this.failedAttempts = 0;
    this.refusals = 0;
    this.troubleReported = false;
    this.refusalReported = false;
    const message: SubscribeMessage = { since: this.lastSeq, ...(this.options.runId === undefined ? {} : { runId: this.options.runId }) };
    this.socket.timeout(this.ackTimeoutMs).emit(SOCKET.subscribe, message, (error: Error | null, ack: unknown) => {
      if (this.closed) {
        return;
      }
      if (error) {
        // A disconnect also fails the ack; the next connection subscribes again.
        if (this.socket.connected) {
          this.fatal(new Error(`the gateway did not acknowledge the subscription within ${this.ackTimeoutMs / 1000}s`));
        }
        return;
      }
      const failure = ReceivedErrorBodySchema.safeParse(ack);
      if (failure.success) {
        this.fatal(ApiError.fromBody(failure.data));
        return;
      }
      if (SubscribeAckSchema.safeParse(ack).data?.truncated) {
        this.options.onNotice(`events after #${message.since} were trimmed from the event stream before they could be replayed: they are skipped`);
      }
      this.options.onSubscribed?.();
    });
  }

  private receive(raw: unknown): void {
    if (this.closed) {
      return;
    }
    const parsed = RawEventSchema.safeParse(raw);
    if (!parsed.success) {
      this.options.onNotice('ignored a malformed event from the gateway');
      return;
    }
    const event = parsed.data;
    if (event.seq <= this.lastSeq) {
      return;
    }
    this.lastSeq = event.seq;
    if (this.options.runId !== undefined && event.runId !== this.options.runId) {
      return;
    }
    this.options.onEvent(event);
  }

  private connectFailed(error: Error): void {
    if (this.closed) {
      return;
    }
    if (!this.socket.active) {
      // The server's middleware refused us; socket.io will not retry by itself.
      const body = ReceivedErrorBodySchema.safeParse((error as { data?: unknown }).data);
      if (body.success && RETRYABLE_REFUSALS.has(body.data.error.code)) {
        this.retryLater(ApiError.fromBody(body.data));
        return;
      }
      this.fatal(body.success ? ApiError.fromBody(body.data) : new ApiError(0, 'network_error', `the gateway refused the connection: ${error.message}`));
      return;
    }
    if (!this.connectedOnce) {
      this.failedAttempts += 1;
      if (this.failedAttempts >= MAX_INITIAL_ATTEMPTS) {
        this.fatal(new ApiError(0, 'network_error', `cannot reach the gateway at ${this.options.baseUrl}: ${error.message}`));
        return;
      }
    }
    if (!this.troubleReported) {
      this.troubleReported = true;
      this.options.onNotice(`cannot reach the gateway (${error.message}); retrying…`);
    }
  }

  /** Connects again after a backoff; the first refusal of a streak is reported, the rest are quiet. */
  private retryLater(refusal: ApiError): void {
    // Not for ever: the run may have ended meanwhile, and nothing would tell this stream.
    if (this.refusals >= (this.options.maxRefusals ?? DEFAULT_MAX_REFUSALS)) {
      this.fatal(refusal);
      return;
    }
    const { firstMs, maxMs } = this.options.retryDelay ?? DEFAULT_RETRY_DELAY;
    const backoff = Math.min(maxMs, firstMs * 2 ** this.refusals);
    const retryAfter = RetryAfterSchema.safeParse(refusal.details);
    // Jitter spreads the clients a limit refused together, so they do not all come back at once.
    const delayMs = Math.max(Math.round(backoff * (0.8 + Math.random() * 0.4)), retryAfter.success ? retryAfter.data.retryAfterSecs * 1000 : 0);
    this.refusals += 1;
    if (!this.refusalReported) {
      this.refusalReported = true;
      this.options.onNotice(`the gateway refused the connection (${refusal.message}); retrying in ${Math.max(1, Math.round(delayMs / 1000))}s…`);
    }
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (!this.closed) {
        this.socket.connect();
      }
    }, delayMs);
  }

  private disconnected(reason: Socket.DisconnectReason): void {
    if (this.closed || reason === 'io client disconnect') {
      return;
    }
    if (reason === 'io server disconnect') {
      const why = this.serverMessage === undefined ? '' : `: ${this.serverMessage}`;
      this.fatal(new ApiError(0, 'network_error', `the gateway closed the connection${why}`));
      return;
    }
    if (!this.troubleReported) {
      this.troubleReported = true;
      this.options.onNotice(`connection lost (${reason}); reconnecting…`);
    }
  }

  /** Some servers explain themselves in an event just before disconnecting a client. */
  private rememberServerMessage(payload: unknown): void {
    const body = ReceivedErrorBodySchema.safeParse(payload);
    if (body.success) {
      this.serverMessage = body.data.error.message;
    } else if (typeof payload === 'string') {
      this.serverMessage = payload;
    } else if (typeof payload === 'object' && payload !== null && typeof (payload as { message?: unknown }).message === 'string') {
      this.serverMessage = (payload as { message: string }).message;
    }
  }

  private fatal(error: Error): void {
    if (this.closed) {
      return;
    }
    this.close();
    this.options.onFatal(error);
  }
}
