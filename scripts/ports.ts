import { readFileSync } from 'node:fs';
import net from 'node:net';

/** Ports this process handed out: never the same one twice, so two services started together differ. */
const handedOut = new Set<number>();

/**
 * The OS's range of ephemeral ports (Linux), from which outgoing connections take their local port:
 * a port picked there can be taken by a client's connection before the service meant for it binds.
 */
function ephemeralRange(): [number, number] | null {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    return Number.isInteger(low) && Number.isInteger(high) ? [low, high] : null;
  } catch {
    return null;
  }
}

/** A port the OS gives a listener on port 0 (one that closes at once). */
function anyPort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * A port that was free a moment ago, for a service about to start. Below the ephemeral range where
 * there is room (so no outgoing connection takes it meanwhile), else one the OS picks; never one
 * handed out before in this process.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const range = ephemeralRange();
  const below = range && range[0] > 20_000 ? range[0] : null;
  for (let tries = 0; ; tries++) {
    const port = below !== null && tries < 200 ? 10_000 + Math.floor(Math.random() * (below - 10_000)) : await anyPort(host);
    if (!handedOut.has(port) && (await canListen(host, port))) {
      handedOut.add(port);
      return port;
    }
  }
}

/** Whether a listener could bind host:port right now (false when something else holds it). */
export function canListen(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}
