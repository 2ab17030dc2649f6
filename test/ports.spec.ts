import { readFileSync } from 'node:fs';
import net from 'node:net';
import { freePort } from '../scripts/ports';

describe('freePort', () => {
  it('hands out distinct ports a listener can bind, outside the range outgoing connections take theirs from', async () => {
    const ports: number[] = [];
    for (let i = 0; i < 20; i++) {
      ports.push(await freePort());
    }
    expect(new Set(ports).size).toBe(ports.length);
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (low > 20_000) {
      expect(ports.every((port) => port >= 10_000 && port < low)).toBe(true);
    }
    const server = net.createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(ports[0], '127.0.0.1', resolve);
    });
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('with an offset, hands out a port whose partner (a cluster bus port) is free and outside that range too', async () => {
    const port = await freePort('127.0.0.1', 10_000);
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (low > 30_000) {
      expect(port + 10_000).toBeLessThan(low);
    }
    const partner = net.createServer();
    await new Promise<void>((resolve, reject) => {
      partner.once('error', reject);
      partner.listen(port + 10_000, '127.0.0.1', resolve);
    });
    await new Promise<void>((resolve) => partner.close(() => resolve()));
  });
});
