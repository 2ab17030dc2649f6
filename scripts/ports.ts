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
 * A port that was free a moment ago, for a service about to start, with `port + offset` free too
 * when an offset is given (a Redis Cluster node's bus port). Below the ephemeral range where there
 * is room (so no outgoing connection takes it meanwhile), else one the OS picks; never one handed
 * out before in this process.
 */
export async function freePort(host = '127.0.0.1', offset = 0): Promise<number> {
  const range = ephemeralRange();
  const top = range ? range[0] - offset : 0;
  for (let tries = 0; ; tries++) {
    const port = top - 10_000 > 1_000 && tries < 200 ? 10_000 + Math.floor(Math.random() * (top - 10_000)) : await anyPort(host);
    const ports = offset > 0 ? [port, port + offset] : [port];
    if (ports.every((p) => p < 65_536 && !handedOut.has(p)) && (await allListenable(host, ports))) {
      ports.forEach((p) => handedOut.add(p));
      return port;
    }
  }
}

async function allListenable(host: string, ports: number[]): Promise<boolean> {
  for (const port of ports) {
    if (!(await canListen(host, port))) {
      return false;
    }
  }
  return true;
}

/** Whether a listener could bind host:port right now (false when something else holds it). */
export function canListen(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}
