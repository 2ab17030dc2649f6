import type { Socket as TcpSocket } from 'node:net';
import type { Server } from 'socket.io';

/** The parts of engine.io's connection this reads: its transport, and (websocket) ws's own TCP socket. */
interface EngineConnection {
  transport: { name: string; socket?: { _socket?: unknown } };
}

/**
 * Packets that wait while a websocket write is under way (engine.io sends one batch at a time) go
 * out as one TCP write instead of one per websocket frame: the connection's TCP socket is corked for
 * the batch engine.io hands to its transport. A busy client, one that follows a whole tenant say,
 * otherwise costs the gateway a system call per event.
 */
export function coalesceFrames(server: Server): void {
  // engine.io emits `flush`, hands the batch to the transport and emits `drain` in one go: one
  // connection at a time is corked.
  let corked: TcpSocket | undefined;
  const uncork = (): void => {
    corked?.uncork();
    corked = undefined;
  };
  server.engine.on('flush', (conn: EngineConnection, packets: unknown[]) => {
    uncork();
    const tcp = conn.transport.name === 'websocket' ? conn.transport.socket?._socket : undefined;
    if (packets.length > 1 && isTcpSocket(tcp)) {
      tcp.cork();
      corked = tcp;
    }
  });
  server.engine.on('drain', uncork);
}

function isTcpSocket(value: unknown): value is TcpSocket {
  return typeof value === 'object' && value !== null && typeof (value as TcpSocket).cork === 'function';
}
