import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of Redis that can lose a reply: once told a marker, the next command that
 * carries it reaches Redis and runs, and its connection is cut instead of the reply being passed
 * on (a network drop between the two). Every other connection goes on as if nothing happened.
 */
export class ReplyDroppingProxy {
  private readonly sockets = new Set<Socket>();
  private marker: { texts: string[]; cut: () => void } | null = null;

  private constructor(private readonly server: Server) {}

  static async start(upstreamUrl: string): Promise<ReplyDroppingProxy> {
    const upstream = new URL(upstreamUrl);
    const server = createServer();
    const proxy = new ReplyDroppingProxy(server);
    server.on('connection', (client: Socket) => proxy.pipe(client, connect(Number(upstream.port || 6379), upstream.hostname)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get url(): string {
    return `redis://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Resolves once the reply to the next command carrying `text` (or any of them) was dropped and its connection cut. */
  dropReplyTo(text: string | string[]): Promise<void> {
    return new Promise((resolve) => (this.marker = { texts: Array.isArray(text) ? text : [text], cut: resolve }));
  }

  async close(): Promise<void> {
    this.sockets.forEach((socket) => socket.destroy());
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private pipe(client: Socket, upstream: Socket): void {
    [client, upstream].forEach((socket) => {
      this.sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        this.sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    });
    let cut: (() => void) | null = null;
    client.on('data', (chunk: Buffer) => {
      if (this.marker?.texts.some((text) => chunk.includes(text))) {
        cut = this.marker.cut;
        this.marker = null;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (cut) {
        client.destroy();
        upstream.destroy();
        cut();
        return;
      }
      client.write(chunk);
    });
  }
}
