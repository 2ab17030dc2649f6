import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo, Socket as TcpSocket } from 'node:net';
import { Server, type Socket } from 'socket.io';
import { io, type Socket as ClientSocket } from 'socket.io-client';
import { waitFor } from '../../../../test/support/wait-for';
import { closeIfBackedUp } from './socket.writes';

const LIMITS = { packets: 200, bytes: 4 * 1024 * 1024, stallMs: 300 };
const PAYLOAD = 'x'.repeat(64 * 1024);

describe('a socket whose client stops reading', () => {
  let http: HttpServer;
  let server: Server;
  let client: ClientSocket;
  let connections = 0;

  beforeEach(async () => {
    http = createServer();
    server = new Server(http);
    connections = 0;
    server.on('connection', () => connections++);
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    client = io(`http://127.0.0.1:${(http.address() as AddressInfo).port}`, { transports: ['websocket'], reconnectionDelay: 50, forceNew: true });
    await waitFor(() => client.connected && connections === 1, { message: 'the connection' });
  });

  afterEach(async () => {
    client.close();
    await server.close();
  });

  const serverSocket = async (): Promise<Socket> => (await server.fetchSockets())[0] as unknown as Socket;
  const clientTcp = (): TcpSocket => (client.io.engine.transport as unknown as { ws: { _socket: TcpSocket } }).ws._socket;

  it('is closed once its backlog passes the limits and it took nothing for a while, and its client reconnects', async () => {
    const socket = await serverSocket();
    const queued = (): number => (socket.conn as unknown as { writeBuffer: unknown[] }).writeBuffer.length;
    clientTcp().pause();
    const reasons: string[] = [];
    client.on('disconnect', (reason) => reasons.push(reason));
    // Until the kernel's buffers are full and engine.io queues past the limit.
    for (let sent = 1; queued() <= LIMITS.packets; sent++) {
      socket.emit('event', PAYLOAD);
      expect(sent).toBeLessThan(5_000);
      if (sent % 50 === 0) {
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    }
    const now = Date.now();
    expect(closeIfBackedUp(socket, LIMITS, now)).toBe(false);
    expect(closeIfBackedUp(socket, LIMITS, now + LIMITS.stallMs - 1)).toBe(false);
    expect(closeIfBackedUp(socket, LIMITS, now + LIMITS.stallMs)).toBe(true);
    clientTcp().resume();
    await waitFor(() => reasons.length > 0 && connections === 2 && client.connected, { message: 'the close and the reconnect' });
    expect(reasons).toEqual(['transport close']);
  });

  it('that reads is left alone, bursts past the limits included', async () => {
    const socket = await serverSocket();
    let received = 0;
    client.on('event', () => received++);
    const burst = LIMITS.packets * 3;
    for (let round = 1; round <= 3; round++) {
      for (let i = 0; i < burst; i++) {
        socket.emit('event', 'small');
        expect(closeIfBackedUp(socket, LIMITS)).toBe(false);
      }
      await waitFor(() => received === round * burst, { message: 'every event at the client' });
      // Long enough for a client that took nothing to count as stalled.
      await new Promise((resolve) => setTimeout(resolve, LIMITS.stallMs + 50));
    }
    expect(connections).toBe(1);
  });
});
