import fs from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { redactUrl } from '@parley/platform';
import { canListen, freePort } from './ports';
import { startRedisProcess, type RedisProcess } from './redis-process';

export type PingResult = { ok: true } | { ok: false; reason: string };

export interface DevRedis {
  /** What the services get as REDIS_URL. */
  url: string;
  /** Set when this script started the server (and so must stop it). */
  server?: RedisProcess;
}

/** One PING with a short timeout: no reconnects, no offline queue, so a dead URL fails fast. */
export async function pingRedis(url: string, timeoutMs = 1500): Promise<PingResult> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
    enableReadyCheck: false,
  });
  // The connect promise only says "Connection is closed."; the error event says why.
  let cause: string | undefined;
  client.on('error', (error: Error) => {
    cause ??= error.message;
  });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${timeoutMs} ms`), timeoutMs + 500);
  });
  try {
    const reply = await Promise.race([client.connect().then(() => client.ping()), timeout]);
    return reply === 'PONG' ? { ok: true } : { ok: false, reason: `answered ${JSON.stringify(reply)}` };
  } catch (error) {
    return { ok: false, reason: cause ?? (error instanceof Error ? error.message : String(error)) };
  } finally {
    clearTimeout(timer);
    client.disconnect();
  }
}

export interface EnsureRedisOptions {
  /** Where a Redis started here keeps its AOF, in a folder named by its port. */
  dataDir: string;
  log: (message: string) => void;
  onRedisLine: (line: string) => void;
}

/**
 * Uses the Redis at `url` when it answers PING. Otherwise, when the URL points at this machine,
 * starts a redis-server with AOF (everysec) on the URL's port, or on a free port when something
 * that is not Redis holds it. A remote URL that does not answer is an error: starting a local
 * Redis behind the user's back would silently split their data.
 */
export async function ensureRedis(url: string, { dataDir, log, onRedisLine }: EnsureRedisOptions): Promise<DevRedis> {
  const parsed = parseRedisUrl(url);
  const ping = await pingRedis(url);
  if (ping.ok) {
    log(`using the Redis that answers at ${redactUrl(url)}`);
    return { url };
  }
  if (/NOAUTH|WRONGPASS|NOPERM/.test(ping.reason)) {
    throw new Error(`the Redis at ${redactUrl(url)} refused us (${ping.reason}): put its password in REDIS_URL (redis://:password@host:port)`);
  }
  if (!['127.0.0.1', 'localhost', '[::1]', '::1'].includes(parsed.hostname)) {
    throw new Error(`no Redis answers at ${redactUrl(url)} (${ping.reason}). Start it, or unset REDIS_URL to let npm start run one locally.`);
  }
  const wanted = Number(parsed.port || 6379);
  let port = wanted;
  if (!(await canListen('127.0.0.1', wanted))) {
    port = await freePort();
    // ioredis' words for a reply that is not RESP (an HTTP server, say) ask the reader to report a bug.
    const why = /Unknown RESP type/.test(ping.reason) ? 'it does not speak Redis' : ping.reason;
    log(`port ${wanted} is held by something that is not a usable Redis (${why}); starting Redis on port ${port} instead`);
  }
  // One folder per port: two stacks with Redis servers of their own never share an AOF.
  const dir = path.join(dataDir, String(port));
  const earlier = path.join(dataDir, 'appendonlydir');
  if (port === wanted && fs.existsSync(earlier) && !fs.existsSync(dir)) {
    // Releases before kept one folder for every port: its data is this port's.
    fs.mkdirSync(dir, { recursive: true });
    fs.renameSync(earlier, path.join(dir, 'appendonlydir'));
    log(`moved the data of an earlier npm start to ${path.relative(process.cwd(), dir) || dir}`);
  }
  fs.mkdirSync(dir, { recursive: true });
  log(`starting redis-server on 127.0.0.1:${port} (data in ${path.relative(process.cwd(), dir) || dir}, AOF everysec)`);
  const server = await startRedisProcess({
    port,
    dir,
    appendonly: true,
    appendfsync: 'everysec',
    extraArgs: ['--loglevel', 'warning'],
    detached: true,
    onLine: onRedisLine,
    readyTimeoutMs: 60_000,
  });
  return { url: `redis://127.0.0.1:${port}${parsed.pathname}`, server };
}

function parseRedisUrl(url: string): URL {
  try {
    return new URL(url);
  } catch {
    throw new Error(`REDIS_URL is not a valid URL: ${JSON.stringify(url)} (expected e.g. redis://127.0.0.1:6379)`);
  }
}
