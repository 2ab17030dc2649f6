import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo, Socket as TcpSocket } from 'node:net';
import { Server } from 'socket.io';
import { io, type Socket as ClientSocket } from 'socket.io-client';
import { countWrites } from '../../../../test/support/count-writes';
import { waitFor } from '../../../../test/support/wait-for';
import { coalesceFrames } from './frame-coalescing';

describe('websocket frames sent while a write is under way', () => {
  let http: HttpServer;
  let server: Server;
  let client: ClientSocket;
  let writes: { count: number } | undefined;

  async function start(coalesce: boolean, transports: Array<'websocket' | 'polling'>): Promise<void> {
    http = createServer();
    http.on('connection', (tcp: TcpSocket) => {
      writes = countWrites(tcp);
    });
    server = new Server(http);
    if (coalesce) {
      coalesceFrames(server);
    }
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    client = io(`http://127.0.0.1:${(http.address() as AddressInfo).port}`, { transports, reconnection: false, forceNew: true });
    await new Promise<void>((resolve) => server.once('connection', () => resolve()));
    await new Promise<void>((resolve) => (client.connected ? resolve() : client.once('connect', resolve)));
  }

  afterEach(async () => {
    client.close();
    await server.close();
  });

  async function burst(count: number): Promise<number[]> {
    const received: number[] = [];
    client.on('n', (n: number) => received.push(n));
    const [socket] = await server.fetchSockets();
    writes!.count = 0;
    for (let n = 0; n < count; n++) {
      socket.emit('n', n);
    }
    await waitFor(() => received.length === count, { message: `${count} events at the client` });
    return received;
  }

  it('go out as one TCP write, in order', async () => {
    await start(true, ['websocket']);
    expect(await burst(200)).toEqual([...Array(200).keys()]);
    // The first frame alone, then the 199 that waited for it, together.
    expect(writes!.count).toBeLessThanOrEqual(3);
  });

  it('(without it: a TCP write per frame)', async () => {
    await start(false, ['websocket']);
    await burst(200);
    expect(writes!.count).toBeGreaterThan(100);
  });

  it('reach a client that upgraded from polling, in order', async () => {
    await start(true, ['polling', 'websocket']);
    await waitFor(() => client.io.engine.transport.name === 'websocket', { message: 'the upgrade' });
    expect(await burst(200)).toEqual([...Array(200).keys()]);
  });
});
