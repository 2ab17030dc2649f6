import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server, type Namespace, type Socket } from 'socket.io';
import {
  RunMessageSchema,
  SOCKET,
  StopMessageSchema,
  SubscribeMessageSchema,
  parseOrThrow,
  type ParleyError,
  type SubscribeMessage,
  type Actor,
  type ParleyEvent,
  type TokenClaims,
} from '@parley/contracts';
import { FakeGatewayHttp } from './fake.gateway.http';
import { toBody } from './fake.gateway.state';

/**
 * An in-memory stand-in for the gateway's HTTP and socket.io API, for the CLI's own specs. Tests
 * script runs through the helper methods (say, ask, finish, ...) and the onRunStarted/onAnswered hooks.
 */
export class FakeGateway extends FakeGatewayHttp {
  /** Handshakes to refuse, in order, each with its error (as the gateway refuses one at the tenant's socket limit). */
  readonly refuseConnections: ParleyError[] = [];
  /** The next this-many socket answers are recorded, then the connection drops before the ack is sent. */
  loseAnswerAcks = 0;
  /** Runs before a subscription takes effect, e.g. to change state the subscriber has not seen yet. */
  onSubscribe: (message: SubscribeMessage) => void = () => undefined;
  private readonly http: HttpServer;
  private readonly io: Server;
  private readonly nsp: Namespace;
  private readonly subscribers = new Map<string, { socket: Socket; runId?: string }>();

  constructor() {
    super();
    this.http = createServer((req, res) => {
      void this.route(req, res);
    });
    this.io = new Server(this.http);
    this.nsp = this.io.of(SOCKET.namespace);
    this.nsp.use((socket, next) => {
      const refusal = this.refuseConnections.shift();
      if (refusal !== undefined) {
        next(Object.assign(new Error(refusal.message), { data: refusal.toBody() }));
        return;
      }
      const auth: unknown = socket.handshake.auth;
      this.authenticate((auth as { token?: unknown }).token).then(
        (claims) => {
          const data: unknown = socket.data;
          (data as { claims?: TokenClaims }).claims = claims;
          next();
        },
        (error: unknown) => next(Object.assign(new Error('unauthenticated'), { data: toBody(error) })),
      );
    });
    this.nsp.on('connection', (socket) => this.connected(socket));
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.http.listen(0, '127.0.0.1', resolve));
    const { port } = this.http.address() as AddressInfo;
    this.url = `http://127.0.0.1:${port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => {
      void this.io.close(() => resolve());
    });
  }

  /** Drops every socket at the transport level, as a network blip would; clients reconnect. */
  dropConnections(): void {
    for (const socket of this.nsp.sockets.values()) {
      socket.conn.close();
    }
  }

  get connectionCount(): number {
    return this.nsp.sockets.size;
  }

  protected publish(runId: string, event: ParleyEvent): void {
    for (const { socket, runId: filter } of this.subscribers.values()) {
      if (filter === undefined || filter === runId) {
        socket.emit(SOCKET.event, event);
      }
    }
  }

  private connected(socket: Socket): void {
    socket.on(SOCKET.subscribe, (message: unknown, ack: (reply: unknown) => void) => {
      try {
        const subscribe = parseOrThrow(SubscribeMessageSchema, message, 'subscribe message');
        this.onSubscribe(subscribe);
        this.subscribes.push(subscribe);
        this.subscribers.set(socket.id, { socket, runId: subscribe.runId });
        const since = this.replayEverything ? 0 : (subscribe.since ?? this.seq);
        const ofSubscription = (event: ParleyEvent): boolean => subscribe.runId === undefined || subscribe.runId === event.runId;
        const truncated = this.events.some((event) => ofSubscription(event) && event.seq > since && event.seq <= this.trimmedUpTo);
        ack({ ok: true, lastSeq: this.seq, truncated });
        for (const event of this.events) {
          if (event.seq > Math.max(since, this.trimmedUpTo) && ofSubscription(event)) {
            socket.emit(SOCKET.event, event);
          }
        }
      } catch (error) {
        ack(toBody(error));
      }
    });
    socket.on(SOCKET.answer, (message: unknown, ack: (reply: unknown) => void) => {
      try {
        const { interactionId, answer } = message as { interactionId: string; answer: unknown };
        const interaction = this.answer(interactionId, answer, this.actorOf(socket), 'socket');
        if (this.loseAnswerAcks > 0) {
          this.loseAnswerAcks -= 1;
          socket.conn.close();
          return;
        }
        ack({ ok: true, interaction });
      } catch (error) {
        ack(toBody(error));
      }
    });
    socket.on(SOCKET.message, (message: unknown, ack: (reply: unknown) => void) => {
      try {
        const { runId, text } = parseOrThrow(RunMessageSchema, message, 'message');
        ack({ ok: true, ...this.postMessage(runId, { text }, this.actorOf(socket)) });
      } catch (error) {
        ack(toBody(error));
      }
    });
    socket.on(SOCKET.stop, (message: unknown, ack: (reply: unknown) => void) => {
      try {
        const { runId } = parseOrThrow(StopMessageSchema, message, 'stop message');
        ack({ ok: true, run: this.stopRun(runId, this.actorOf(socket)) });
      } catch (error) {
        ack(toBody(error));
      }
    });
    socket.on('disconnect', () => this.subscribers.delete(socket.id));
  }

  private actorOf(socket: Socket): Actor {
    const data: unknown = socket.data;
    const claims = (data as { claims?: TokenClaims }).claims;
    return { kind: 'user', subject: claims?.sub ?? 'cli', role: claims?.role ?? 'admin' };
  }
}
