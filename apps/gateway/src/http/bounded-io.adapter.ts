import type { Server as HttpServer } from 'node:http';
import type { Socket as TcpSocket } from 'node:net';
import type { INestApplication } from '@nestjs/common';
import { IoAdapter } from '@nestjs/platform-socket.io';
import type { MessageMappingProperties } from '@nestjs/websockets';
import type { Observable } from 'rxjs';
import type { Event, Namespace, Server, ServerOptions, Socket } from 'socket.io';
import { LIMITS, ParleyError, type ErrorBody } from '@parley/contracts';
import { coalesceFrames } from './frame-coalescing';
import { nestedDeeperThan, tooDeepError } from './input-bounds';

const EVENT_NAME_SHOWN = 64;

const WRONG_NAMESPACE: ErrorBody = { error: { code: 'not_found', message: 'no namespace here: connect to /v1' } };

/**
 * socket.io with the same input bounds as HTTP:
 * - a message (engine.io packet) over `LIMITS.bodyBytes` closes the connection (socket.io cannot ack it);
 * - every incoming event passes a per-socket middleware before any handler runs: an event no
 *   handler listens to, or a payload nested deeper than `MAX_NESTING_DEPTH`, is dropped and, when
 *   the client asked for an ack, acked with an error body (`not_found` / `bad_request`).
 */
export class BoundedIoAdapter extends IoAdapter {
  private readonly events = new Set<string>();
  /** Every TCP connection of the HTTP server (HTTP and upgraded websockets), for a bounded close. */
  private readonly connections = new Set<TcpSocket>();

  /** `onCut`: told how many connections a close had to cut after its grace period. */
  constructor(
    app: INestApplication,
    private readonly closeGraceMs: number,
    private readonly onCut: (count: number) => void,
  ) {
    super(app);
    (this.httpServer as HttpServer).on('connection', (socket: TcpSocket) => {
      this.connections.add(socket);
      socket.once('close', () => this.connections.delete(socket));
    });
  }

  /**
   * Closes gracefully first: sockets are told the server is shutting down. But the HTTP server's
   * close waits for every connection to end, and a client that never answers a websocket close
   * (ws waits 30 s) or never finishes its request holds a shutdown or a restart: after the grace
   * period, what is still open is cut.
   */
  override async close(server: Server): Promise<void> {
    // Nest closes the namespace too; only the server's close waits for the HTTP server.
    if (server.httpServer !== this.httpServer) {
      return super.close(server);
    }
    const cut = setTimeout(() => {
      const open = [...this.connections];
      open.forEach((socket) => socket.destroy());
      if (open.length > 0) {
        this.onCut(open.length);
      }
    }, this.closeGraceMs);
    try {
      await super.close(server);
    } finally {
      clearTimeout(cut);
    }
  }

  override createIOServer(port: number, options?: Partial<ServerOptions>): Server {
    const server = super.createIOServer(port, { ...options, maxHttpBufferSize: LIMITS.bodyBytes }) as Server;
    coalesceFrames(server);
    // socket.io always has a main namespace: refused, so that no connection is held without a token.
    server.of('/').use((_socket, next) => next(Object.assign(new Error(WRONG_NAMESPACE.error.message), { data: WRONG_NAMESPACE })));
    return server;
  }

  override bindClientConnect(server: Namespace, callback: (...args: unknown[]) => unknown): void {
    // Registered before the gateway's own connection handler, so it screens the very first packet.
    server.on('connection', (socket: Socket) => socket.use((packet, next) => this.screen(packet, next)));
    super.bindClientConnect(server, callback);
  }

  override bindMessageHandlers(socket: Socket, handlers: MessageMappingProperties[], transform: (data: unknown) => Observable<unknown>): void {
    for (const { message } of handlers) {
      if (typeof message === 'string') {
        this.events.add(message);
      }
    }
    super.bindMessageHandlers(socket, handlers, transform);
  }

  private screen(packet: Event, next: (error?: Error) => void): void {
    const [event, ...args] = packet as unknown[];
    const last = args.at(-1);
    const ack = typeof last === 'function' ? (last as (reply: ErrorBody) => void) : undefined;
    if (ack) {
      args.pop();
    }
    let refusal: ParleyError | undefined;
    if (typeof event !== 'string' || !this.events.has(event)) {
      const name = String(event);
      refusal = new ParleyError('not_found', `unknown event "${name.length > EVENT_NAME_SHOWN ? `${name.slice(0, EVENT_NAME_SHOWN)}…` : name}"`);
    } else if (args.some((arg) => nestedDeeperThan(arg))) {
      refusal = tooDeepError(`${event} message`);
    }
    if (!refusal) {
      next();
      return;
    }
    // Dropped: not calling next() means no listener sees the packet.
    ack?.(refusal.toBody());
  }
}
