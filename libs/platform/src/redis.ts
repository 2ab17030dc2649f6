import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { BATCHING_CONNECTOR } from './net/batching.connector';
import { failoverReconnect } from './net/failover-reconnect';
import { failUnansweredScripts } from './net/unanswered';
import { createLogger, type Logger } from './logger';

/** A connection to a single Redis or to a Redis Cluster: both speak every command Parley sends. */
export type RedisClient = Redis | Cluster;

/** Where Redis is: REDIS_URL, or in cluster mode the seed nodes of REDIS_CLUSTER_NODES. */
export interface RedisTarget {
  redisUrl: string;
  /** host:port of some cluster nodes (the rest are discovered); set = cluster mode. */
  redisClusterNodes?: string[];
}

/**
 * One place that opens Redis connections. BullMQ workers need `maxRetriesPerRequest: null`;
 * request/response clients keep a bound so a dead Redis surfaces as an error, not a hang.
 * A plain URL always opens a single connection; a target with cluster nodes opens an ioredis
 * Cluster, which follows MOVED/ASK redirections and takes its credentials and TLS from REDIS_URL.
 *
 * Every connection sends the commands of one tick as one write (`BATCHING_CONNECTOR`; a cluster's
 * pub/sub connection excepted, which ioredis opens with options of its own). None auto-pipelines:
 * on a single Redis, ioredis' pipeline per tick cost more CPU than it saved (bench §2 and §7: about
 * 4% of a cycle); on a cluster, a pipeline that meets a slot being moved is sent again whole to the
 * importing master (ASKING), where the keys not yet moved read as missing
 * (test/e2e/cluster-migration.e2e.spec.ts). Many commands at once go as an explicit pipeline.
 *
 * A command connection never sends a script call twice: one whose reply a dropped connection lost
 * fails with a ReplyLostError (the scripts are not all idempotent). Other commands, and blocking
 * connections (BullMQ's workers, pub/sub), keep ioredis' resend.
 */
export function createRedis(url: string, kind?: 'command' | 'blocking', extra?: ConnectionOptions): Redis;
export function createRedis(target: RedisTarget, kind?: 'command' | 'blocking', extra?: ConnectionOptions): RedisClient;
export function createRedis(target: string | RedisTarget, kind?: 'command' | 'blocking', extra?: ConnectionOptions): RedisClient;
export function createRedis(target: string | RedisTarget, kind: 'command' | 'blocking' = 'command', { purpose = kind, ...extra }: ConnectionOptions = {}): RedisClient {
  const options: RedisOptions = {
    maxRetriesPerRequest: kind === 'blocking' ? null : 3,
    enableAutoPipelining: false,
    lazyConnect: false,
    ...extra,
  };
  // ioredis takes a Connector over Sentinel: one set here would connect past the sentinels.
  if (!options.sentinels) {
    options.Connector ??= BATCHING_CONNECTOR;
  }
  const log = new ConnectionLog(purpose);
  if (typeof target === 'string' || !target.redisClusterNodes?.length) {
    // A Cluster answers a failover with redirections, which it follows itself.
    options.reconnectOnError ??= failoverReconnect((error) => log.error(error));
    const redis = new Redis(typeof target === 'string' ? target : target.redisUrl, options);
    if (kind === 'command') {
      failUnansweredScripts(redis);
    }
    return log.watch(redis);
  }
  const { enableAutoPipelining, lazyConnect, ...perNode } = options;
  const cluster = new Cluster(target.redisClusterNodes.map(parseNode), {
    enableAutoPipelining,
    lazyConnect,
    // Reads go to masters: a run's state must be read where it was just written.
    scaleReads: 'master',
    redisOptions: { ...credentialsOf(target.redisUrl), ...perNode },
  });
  if (kind === 'command') {
    cluster.on('+node', (node: Redis) => failUnansweredScripts(node));
  }
  return log.watch(cluster);
}


/** ioredis' options, and what the connection is for ("store", "event feed"): its log lines name it. */
export type ConnectionOptions = RedisOptions & { purpose?: string };

let logger: Logger | undefined;
const redisLog = (): Logger => (logger ??= createLogger('redis'));

/**
 * A connection's errors as JSON log lines (without a listener, ioredis prints every one of them,
 * several a second while Redis is away): the first of an outage at warn, then the next only once
 * it has lasted another CONNECTION_ERROR_EVERY_MS, and its end.
 */
class ConnectionLog {
  private failingSince?: number;
  private lastLogged = 0;

  constructor(private readonly connection: string) {}

  watch<T extends RedisClient>(client: T): T {
    client.on('error', (error: Error) => this.error(error));
    client.on('ready', () => {
      if (this.failingSince !== undefined) {
        redisLog().info({ msg: 'Redis connection back', connection: this.connection, afterMs: Date.now() - this.failingSince });
        this.failingSince = undefined;
        this.lastLogged = 0;
      }
    });
    return client;
  }

  error(error: Error): void {
    const now = Date.now();
    this.failingSince ??= now;
    if (now - this.lastLogged >= CONNECTION_ERROR_EVERY_MS) {
      this.lastLogged = now;
      redisLog().warn({ msg: 'Redis connection error; reconnecting', connection: this.connection, err: error.message, failingForMs: now - this.failingSince });
    }
  }
}

const CONNECTION_ERROR_EVERY_MS = 10_000;

/** A Redis URL fit for a log line: its password, if any, as `***`. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) {
      parsed.password = '***';
    }
    // ioredis also reads a password from the query.
    if (parsed.searchParams.has('password')) {
      parsed.searchParams.set('password', '***');
    }
    return parsed.toString();
  } catch {
    return url;
  }
}

/** "host:port" (an IPv6 host in brackets: "[::1]:7000"). */
export function parseNode(node: string): { host: string; port: number } {
  const match = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(node.trim());
  const port = Number(match?.[2]);
  if (!match || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw new Error(`not a cluster node (host:port): ${JSON.stringify(node)}`);
  }
  return { host: match[1], port };
}

/** What every cluster node connection takes from REDIS_URL: user, password, TLS (rediss://). */
function credentialsOf(url: string): RedisOptions {
  const parsed = new URL(url);
  return {
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    ...(parsed.protocol === 'rediss:' ? { tls: {} } : {}),
  };
}
