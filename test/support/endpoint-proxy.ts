import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

/**
 * One address in front of whichever Redis is the primary, as a managed Redis's endpoint is: after a
 * failover, new connections reach the new primary, while the ones already open stay with the old
 * one (now a replica) until they are closed.
 */
export class EndpointProxy {
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    private upstream: URL,
  ) {}

  static async start(upstreamUrl: string): Promise<EndpointProxy> {
    const server = createServer();
    const proxy = new EndpointProxy(server, new URL(upstreamUrl));
    server.on('connection', (client: Socket) => proxy.pipe(client));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get url(): string {
    return `redis://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** New connections go to `url` from now on; open ones stay where they are. */
  pointAt(url: string): void {
    this.upstream = new URL(url);
  }

  async close(): Promise<void> {
    this.sockets.forEach((socket) => socket.destroy());
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private pipe(client: Socket): void {
    const upstream = connect(Number(this.upstream.port || 6379), this.upstream.hostname);
    [client, upstream].forEach((socket) => {
      this.sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        this.sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    });
    client.pipe(upstream);
    upstream.pipe(client);
  }
}
