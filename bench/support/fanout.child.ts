/**
 * A child process of the fan-out benchmark (item 6), run with the harness's ts-hook.
 * FANOUT_MODE=clients: opens FANOUT_COUNT socket.io clients on FANOUT_URL (namespace /v1) and,
 *   with FANOUT_SUBSCRIBE=1, subscribes each to the tenant's live events (Parley's gateway); it
 *   records when each client receives the event of the run named in a `collect` message.
 * FANOUT_MODE=server: a bare socket.io server (the baseline) that emits one `event` to every
 *   client of /v1 on an `emit` message.
 * Talks to the bench over IPC; times are epoch ms with sub-ms precision (one clock per machine).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from 'socket.io';
import { io, type Socket } from 'socket.io-client';

type Message = { cmd: 'collect'; key: string; timeoutMs: number } | { cmd: 'emit'; key: string; event: unknown } | { cmd: 'close' };

const now = () => performance.timeOrigin + performance.now();
const send = (message: unknown) => process.send!(message);

async function clients(): Promise<void> {
  const url = process.env.FANOUT_URL!;
  const count = Number(process.env.FANOUT_COUNT);
  const subscribe = process.env.FANOUT_SUBSCRIBE === '1';
  const received = new Map<string, number[]>();
  const sockets: Socket[] = [];
  const open = () =>
    new Promise<Socket>((resolve, reject) => {
      const socket = io(`${url}/v1`, { auth: { token: process.env.FANOUT_TOKEN }, transports: ['websocket'], reconnection: false, forceNew: true, timeout: 30_000 });
      socket.on('event', (event: { runId: string; type: string }) => {
        if (event.type === 'run.created') {
          const at = now();
          const list = received.get(event.runId) ?? [];
          list.push(at);
          received.set(event.runId, list);
        }
      });
      socket.once('connect', () => resolve(socket));
      socket.once('connect_error', reject);
    });
  for (let i = 0; i < count; i += 100) {
    const batch = await Promise.all(Array.from({ length: Math.min(100, count - i) }, open));
    if (subscribe) {
      await Promise.all(batch.map((s) => s.timeout(30_000).emitWithAck('subscribe', {})));
    }
    sockets.push(...batch);
  }
  process.on('message', (message: Message) => {
    if (message.cmd === 'collect') {
      const deadline = Date.now() + message.timeoutMs;
      const check = () => {
        const times = received.get(message.key) ?? [];
        if (times.length >= count || Date.now() > deadline) {
          send({ cmd: 'collected', key: message.key, times });
          received.delete(message.key);
        } else {
          setTimeout(check, 10);
        }
      };
      check();
    } else if (message.cmd === 'close') {
      sockets.forEach((s) => s.disconnect());
      process.exit(0);
    }
  });
  send({ cmd: 'ready', connected: sockets.filter((s) => s.connected).length });
}

async function server(): Promise<void> {
  const http = createServer();
  const ioServer = new Server(http, { transports: ['websocket'] });
  const nsp = ioServer.of('/v1');
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  process.on('message', (message: Message) => {
    if (message.cmd === 'emit') {
      nsp.emit('event', message.event);
    } else if (message.cmd === 'close') {
      void ioServer.close();
      process.exit(0);
    }
  });
  send({ cmd: 'ready', port: (http.address() as AddressInfo).port });
}

void (process.env.FANOUT_MODE === 'server' ? server() : clients()).catch((error: unknown) => {
  send({ cmd: 'error', error: String(error) });
  process.exit(1);
});
