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
