import { BlockList, isIP } from 'node:net';
import { lookup } from 'node:dns';
import type { LookupAddress, LookupOptions } from 'node:dns';

/** Where a webhook must not go unless PARLEY_WEBHOOK_ALLOW_PRIVATE is set: this host's and private networks. */
const BLOCKED = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  BLOCKED.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  // The unspecified address, loopback and the deprecated IPv4-compatible form (::127.0.0.1).
  ['::', 96],
  // IPv4-translated (an IPv4 address behind a translator); IPv4-mapped ones are checked as IPv4.
  ['::ffff:0:0:0', 96],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  // Teredo: an IPv4 host reached through a tunnel.
  ['2001::', 32],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  BLOCKED.addSubnet(network, prefix, 'ipv6');
}

/** True for loopback, private, link-local, shared, documentation, multicast and reserved addresses (IPv4-mapped IPv6 included). */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) {
    return false;
  }
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    if (mapped) {
      return BLOCKED.check(mapped[1], 'ipv4');
    }
  }
  return BLOCKED.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** The URL's host as an address or name, without IPv6 brackets. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

function isLocalName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

export type Resolve = (host: string) => Promise<string[]>;

const resolveAll: Resolve = (host) =>
  new Promise((resolve, reject) => lookup(host, { all: true, verbatim: true }, (error, addresses) => (error ? reject(error) : resolve(addresses.map((a) => a.address)))));

/**
 * Why a URL may not be registered as a webhook endpoint, or null. Literal addresses and local names
 * are checked; a name is resolved (briefly) and refused when it points at a private address. A name
 * that does not resolve now is accepted: it is resolved and checked again on every delivery.
 */
export async function webhookTargetProblem(value: string, allowPrivate: boolean, resolve: Resolve = resolveAll, timeoutMs = 2000): Promise<string | null> {
  if (allowPrivate) {
    return null;
  }
  const host = hostOf(new URL(value));
  if (isIP(host) !== 0) {
    return isPrivateAddress(host) ? `address ${host} is private or local (set PARLEY_WEBHOOK_ALLOW_PRIVATE=true to allow it)` : null;
  }
  if (isLocalName(host)) {
    return `host ${host} is local (set PARLEY_WEBHOOK_ALLOW_PRIVATE=true to allow it)`;
  }
  let timer: NodeJS.Timeout | undefined;
  const addresses = await Promise.race([
    resolve(host).catch(() => [] as string[]),
    new Promise<string[]>((done) => {
      timer = setTimeout(() => done([]), timeoutMs);
    }),
  ]).finally(() => clearTimeout(timer));
  const blocked = addresses.find(isPrivateAddress);
  return blocked ? `host ${host} resolves to ${blocked}, a private or local address (set PARLEY_WEBHOOK_ALLOW_PRIVATE=true to allow it)` : null;
}

/** Thrown (through the socket) when a delivery's host resolves to an address it may not reach. */
export class BlockedAddressError extends Error {
  readonly code = 'EWEBHOOKBLOCKED';
  constructor(readonly host: string, readonly address: string) {
    super(`host ${host} resolves to ${address}, a private or local address`);
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http(s).request that refuses private addresses: the connection goes to exactly the
 * address that was checked, so a name that resolves differently a moment later (DNS rebinding)
 * cannot slip through. Literal addresses never reach a lookup: check them with isPrivateAddress.
 */
export function guardedLookup(allowPrivate: boolean) {
  return (host: string, options: LookupOptions, callback: LookupCallback): void => {
    lookup(host, { ...options, all: true }, (error, addresses) => {
      if (error) {
        callback(error, []);
        return;
      }
      const blocked = allowPrivate ? undefined : addresses.find((a) => isPrivateAddress(a.address));
      if (blocked) {
        callback(new BlockedAddressError(host, blocked.address), []);
        return;
      }
      if (options.all) {
        callback(null, addresses);
      } else {
        callback(null, addresses[0].address, addresses[0].family);
      }
    });
  };
}
