import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitFor } from '../support/wait-for';

/** One request an agent's http_request tool sent, held open until the test answers it. */
export interface HeldRequest {
  n: number;
  method: string;
  path: string;
  /** The tool call's effect id: a retried call carries the same one. */
  idempotencyKey: string;
  at: number;
  respond(status: number, body: string): void;
}

/**
 * An HTTP endpoint for an agent's http_request tool that answers nothing by itself: a test sees a
 * worker in the middle of a step (the request arrived, its result is not in the log yet), and
 * decides when, and with what, that step may go on.
 */
export class HeldRequestServer {
  readonly requests: HeldRequest[] = [];
  private readonly server: http.Server;

  private constructor(server: http.Server) {
    this.server = server;
  }

  static async start(): Promise<HeldRequestServer> {
    const server = http.createServer();
    const held = new HeldRequestServer(server);
    server.on('request', (req, res) => held.hold(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return held;
  }

  /** host:port, for an agent's `http.allowed_hosts`. */
  get host(): string {
    return `127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The request after the first `after` ones, once it has arrived. */
  next(after: number, timeoutMs = 20_000): Promise<HeldRequest> {
    return waitFor(() => this.requests[after], { timeoutMs, message: `http request #${after + 1} to ${this.host}` });
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private hold(req: http.IncomingMessage, res: http.ServerResponse): void {
    req.resume();
    this.requests.push({
      n: this.requests.length + 1,
      method: req.method ?? '',
      path: req.url ?? '',
      idempotencyKey: String(req.headers['idempotency-key'] ?? ''),
      at: Date.now(),
      respond: (status, body) => {
        if (!res.writableEnded && !res.destroyed) {
          res.writeHead(status, { 'content-type': 'text/plain' }).end(body);
        }
      },
    });
  }
}
