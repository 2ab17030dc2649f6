import type { Socket } from 'socket.io';

/**
 * Resolves once the socket's transport has written out everything it was handed (engine.io holds
 * back what comes while a write is under way, and sends it when the transport is ready again), or
 * once the socket is closed: a client that stops reading is closed by the heartbeat.
 */
export function writtenOut(socket: Socket): Promise<void> {
  const conn = socket.conn;
  return new Promise((resolve) => {
    let transport = conn.transport;
    const check = (): void => {
      if (conn.readyState === 'open' && !conn.transport.writable) {
        if (conn.transport !== transport) {
          // Upgraded meanwhile (polling to websocket): the new transport says when it is ready.
          transport.off('ready', check);
          transport = conn.transport;
          transport.on('ready', check);
        }
        return;
      }
      transport.off('ready', check);
      conn.off('upgrade', check);
      conn.off('close', check);
      resolve();
    };
    transport.on('ready', check);
    conn.on('upgrade', check);
    conn.on('close', check);
    check();
  });
}

/**
 * A socket is closed for not reading when more than `packets` events or `bytes` wait for it and it
 * has taken none for `stallMs`. The time keeps a burst to a client that reads (5,000 live events
 * held back during a replay and handed on at once) from counting: engine.io sends what waits as one
 * batch as soon as the client takes the one before.
 */
export const BACKLOG_LIMITS = { packets: 2_000, bytes: 16 * 1024 * 1024, stallMs: 5_000 };

/** The part of engine.io's connection this reads: the packets waiting for the transport. */
interface Backlog {
  writeBuffer?: Array<{ data?: unknown }>;
}

/** When each connection last handed its waiting packets to the transport (engine.io's `drain`). */
const lastDrained = new WeakMap<object, number>();

/**
 * A client that stops reading while its tenant's events go on: engine.io queues every event for it,
 * unbounded, until the heartbeat gives up (about 45 s). Past the limits its connection is closed at
 * once, the queue discarded; the client reconnects and replays from the last seq it read. Returns
 * whether it was closed. Nothing is summed or watched while the queue is short.
 */
export function closeIfBackedUp(socket: Socket, limits = BACKLOG_LIMITS, now = Date.now()): boolean {
  const conn = socket.conn;
  const queued = (conn as unknown as Backlog).writeBuffer ?? [];
  if (queued.length <= Math.min(64, limits.packets)) {
    return false;
  }
  const drained = lastDrained.get(conn);
  if (drained === undefined) {
    lastDrained.set(conn, now);
    conn.on('drain', () => lastDrained.set(conn, Date.now()));
    return false;
  }
  if (now - drained < limits.stallMs) {
    return false;
  }
  let bytes = 0;
  for (const packet of queued) {
    bytes += typeof packet.data === 'string' ? packet.data.length : Buffer.isBuffer(packet.data) ? packet.data.byteLength : 0;
  }
  if (queued.length <= limits.packets && bytes <= limits.bytes) {
    return false;
  }
  conn.close(true);
  return true;
}
