import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { transformFileSync } from '@swc/core';
import { Redis } from 'ioredis';
import { stringify } from 'yaml';
import type { AnswerBody, LogEntry, ParleyEvent, Role } from '@parley/contracts';
import { createRedis, signToken, type RedisClient } from '@parley/platform';
import { RedisKeys, eventFromEntry } from '@parley/store';
import { freePort } from '../../scripts/ports';
import { EventClient, type EventClientOptions } from './event.client';
import { ServiceProcess, type ExitRecord, type ServiceKind } from './service.process';

export interface HarnessOptions {
  /** Names the key prefix and the log folder, e.g. "takeover". */
  name: string;
  /** @defaultValue 1 */
  gateways?: number;
  /** @defaultValue 1 */
  workers?: number;
  /** @defaultValue 1 */
  interactionServices?: number;
  /** Agent definitions, written as YAML into the services' PARLEY_AGENTS_DIR. */
  agents: Array<Record<string, unknown> & { name: string }>;
  /** Extra environment of every service, e.g. `{ PARLEY_LEASE_MS: '2000' }`. */
  env?: Record<string, string>;
  /** Extra environment of one service, by name (`worker-1`, `interactions-2`, …), over `env`. */
  serviceEnv?: Record<string, Record<string, string>>;
  /** @defaultValue REDIS_URL, else redis://127.0.0.1:6379 */
  redisUrl?: string;
  /** Redis Cluster seed nodes (host:port): the services get REDIS_CLUSTER_NODES, the harness a cluster client. */
  redisClusterNodes?: string[];
  /** @defaultValue 'info' */
  logLevel?: string;
}

const ROOT = resolve(__dirname, '..', '..');
/** Variables of the developer's shell that must not leak into a service of the harness. */
const OWN_ENV = /^(PARLEY_|REDIS_URL$|REDIS_CLUSTER_NODES$|PORT$|LOG_LEVEL$|ANTHROPIC_)/;
const CACHE_LIMIT = 5000;

/** Services still running when the test process exits are killed by pid, whatever failed before. */
const live = new Set<ServiceProcess>();
process.once('exit', () => live.forEach((service) => service.killNow()));

/**
 * Parley as separate OS processes on one machine: M gateways, N loop-workers and K
 * interaction-services against one Redis, under a key prefix and tenant of their own. Services run
 * from the TypeScript sources (see ts-hook.ts); each has its own ports, environment and log file.
 * Loop-workers are named worker-1..N, which is also their PARLEY_WORKER_ID.
 */
export class Harness {
  readonly prefix: string;
  readonly tenant: string;
  readonly secret = `harness-${randomUUID()}`;
  readonly redis: RedisClient;
  readonly keys: RedisKeys;
  readonly gateways: ServiceProcess[] = [];
  readonly workers: ServiceProcess[] = [];
  readonly interactionServices: ServiceProcess[] = [];
  /** Every exit of every service, in order. */
  readonly exits: ExitRecord[] = [];
  private readonly clients: EventClient[] = [];
  private failed = false;

  private constructor(
    private readonly options: HarnessOptions,
    readonly dir: string,
    private readonly agentsDir: string,
    private readonly hook: string,
  ) {
    const id = randomUUID().slice(0, 8);
    this.prefix = `h-${options.name}-${id}`;
    this.tenant = `t${id}`;
    this.redis = options.redisClusterNodes ? createRedis({ redisUrl: this.redisUrl, redisClusterNodes: options.redisClusterNodes }) : new Redis(this.redisUrl);
    this.keys = new RedisKeys(this.prefix, { cluster: Boolean(options.redisClusterNodes) });
  }

  get redisUrl(): string {
    return this.options.redisUrl ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  }

  static async start(options: HarnessOptions): Promise<Harness> {
    const dir = mkdtempSync(join(tmpdir(), `parley-harness-${options.name}-`));
    const agentsDir = join(dir, 'agents');
    mkdirSync(agentsDir);
    for (const agent of options.agents) {
      writeFileSync(join(agentsDir, `${agent.name}.yaml`), stringify(agent));
    }
    const harness = new Harness(options, dir, agentsDir, compileHook(dir));
    try {
      await harness.addServices('gateway', options.gateways ?? 1);
      await harness.addServices('loop-worker', options.workers ?? 1);
      await harness.addServices('interaction-service', options.interactionServices ?? 1);
      await Promise.all(harness.services().map((service) => service.start()));
    } catch (error) {
      harness.failed = true;
      await harness.close();
      throw error;
    }
    return harness;
  }

  services(): ServiceProcess[] {
    return [...this.gateways, ...this.workers, ...this.interactionServices];
  }

  /** 1-based, as in the process names. */
  gateway(n: number): ServiceProcess {
    return this.nth(this.gateways, n);
  }
  worker(n: number): ServiceProcess {
    return this.nth(this.workers, n);
  }
  interactionService(n: number): ServiceProcess {
    return this.nth(this.interactionServices, n);
  }

  /** The loop-worker process with this PARLEY_WORKER_ID (= its name). */
  workerById(id: string): ServiceProcess {
    const worker = this.workers.find((w) => w.name === id);
    if (!worker) {
      throw new Error(`no loop-worker ${id} (have ${this.workers.map((w) => w.name).join(', ')})`);
    }
    return worker;
  }

  /**
   * The loop-worker whose step parked the run (its log line "run step done" with outcome parked):
   * a parked run's hash names no worker, since none holds it.
   */
  parkedBy(runId: string): string | undefined {
    const parkedIt = (line: Record<string, unknown>) => line.runId === runId && line.outcome === 'parked';
    return this.workers.find((worker) => worker.jsonLines().some(parkedIt))?.name;
  }

  /** Exits the harness did not cause (crashes): a test expects none. */
  unexpectedExits(): ExitRecord[] {
    return this.exits.filter((exit) => !exit.expected);
  }

  token(claims: { sub?: string; role?: Role; tenant?: string } = {}): string {
    return signToken({ tenant: claims.tenant ?? this.tenant, sub: claims.sub ?? 'alice', role: claims.role ?? 'member' }, this.secret);
  }

  async http<T = any>(gateway: number, method: string, path: string, body?: unknown, token = this.token(), headers: Record<string, string> = {}): Promise<{ status: number; body: T }> {
    const response = await fetch(`${this.gateway(gateway).url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T };
  }

  /** `idempotencyKey`: a retry with the same key answers with the run the first try made, if it made one. */
  async startRun(gateway: number, agent: string, task = 'do the thing', token = this.token(), idempotencyKey?: string): Promise<string> {
    const res = await this.http<{ run: { id: string } }>(gateway, 'POST', '/v1/runs', { agent, task }, token, idempotencyKey ? { 'idempotency-key': idempotencyKey } : {});
    if (res.status !== 201) {
      throw new Error(`start run on gateway-${gateway} failed: ${res.status} ${JSON.stringify(res.body)}`);
    }
    return res.body.run.id;
  }

  async answer(gateway: number, interactionId: string, answer: AnswerBody, token = this.token()): Promise<void> {
    const res = await this.http(gateway, 'POST', `/v1/interactions/${interactionId}/answer`, answer, token);
    if (res.status !== 200) {
      throw new Error(`answer on gateway-${gateway} failed: ${res.status} ${JSON.stringify(res.body)}`);
    }
  }

  /** The run's hash as stored, with fields the API does not show (`worker`, `lease`, `leaseUntil`). */
  runHash(runId: string): Promise<Record<string, string>> {
    return this.redis.hgetall(this.keys.run(this.tenant, runId));
  }

  /**
   * The id of the question the run is parked on, once the interaction-service has opened it (a
   * run is `waiting` a moment before its interaction exists, and an answer before that is refused).
   */
  async openQuestion(runId: string): Promise<string | undefined> {
    const run = await this.runHash(runId);
    if (run.status !== 'waiting' || !run.pendingInteractionId) {
      return undefined;
    }
    const status = await this.redis.hget(this.keys.interaction(this.tenant, run.pendingInteractionId), 'status');
    return status === 'open' ? run.pendingInteractionId : undefined;
  }

  async runLog(runId: string): Promise<LogEntry[]> {
    const raw = await this.redis.lrange(this.keys.runLog(this.tenant, runId), 0, -1);
    return raw.map((line) => JSON.parse(line) as LogEntry);
  }

  /** The tenant's last event sequence number. */
  async tenantSeq(): Promise<number> {
    return Number((await this.redis.get(this.keys.seq(this.tenant))) ?? 0);
  }

  /** Every event of the tenant still in its stream, oldest first. */
  async tenantEvents(): Promise<ParleyEvent[]> {
    const entries = await this.redis.xrange(this.keys.tenantEvents(this.tenant), '-', '+');
    return entries.flatMap((entry) => eventFromEntry(this.tenant, entry) ?? []);
  }

  /** A socket.io client on gateway `n`, subscribed (see EventClient); closed by {@link close}. */
  async client(n: number, options: Omit<EventClientOptions, 'urls' | 'token'> & { token?: string } = {}): Promise<EventClient> {
    const client = new EventClient({
      ...options,
      token: options.token ?? this.token({ role: 'admin', sub: 'watcher' }),
      urls: () => this.gateways.filter((g) => g.running).map((g) => g.url),
      name: options.name ?? `client-${this.clients.length + 1}@gateway-${n}`,
    });
    this.clients.push(client);
    await client.connect(this.gateway(n).url, options.since);
    return client;
  }

  /** Runs `test`; when it throws, the error names every process, how it exited and its log file. */
  async diagnose<T>(test: () => Promise<T>): Promise<T> {
    try {
      return await test();
    } catch (error) {
      this.failed = true;
      if (error instanceof Error) {
        error.message = `${error.message}\n${this.describe()}`;
      }
      throw error;
    }
  }

  describe(): string {
    const clients = this.clients.map((c) => `  ${c.describe()}`);
    return [`harness ${this.prefix} (tenant ${this.tenant}), logs in ${this.dir}:`, ...this.services().map((s) => `  ${s.describe()}`), ...clients].join('\n');
  }

  /** A figure worth keeping (e.g. a measured takeover time): printed and appended to <dir>/report.txt. */
  report(line: string): void {
    writeFileSync(join(this.dir, 'report.txt'), `${line}\n`, { flag: 'a' });
    console.log(`[harness ${this.options.name}] ${line}`);
  }

  /**
   * Stops every service (SIGTERM, then SIGKILL), checks that none of their pids is still alive,
   * deletes this harness's keys, and removes the log folder unless something failed.
   */
  async close(): Promise<void> {
    this.clients.forEach((client) => client.close());
    await Promise.all(this.services().map((service) => service.stop()));
    await Promise.all(this.services().map((service) => service.closeLog()));
    const alive = this.exits.map((exit) => exit.pid).filter(isAlive);
    // A cluster is the test's own and goes with it; a scan there would cover one node only.
    if (!this.options.redisClusterNodes) {
      let cursor = '0';
      do {
        const [next, keys] = await this.redis.scan(cursor, 'MATCH', `${this.prefix}:*`, 'COUNT', 1000);
        cursor = next;
        if (keys.length > 0) {
          await this.redis.unlink(...keys);
        }
      } while (cursor !== '0');
    }
    await this.redis.quit();
    if (this.failed || this.unexpectedExits().length > 0 || process.env.PARLEY_HARNESS_KEEP_LOGS) {
      console.log(this.describe());
    } else {
      rmSync(this.dir, { recursive: true, force: true });
    }
    if (alive.length > 0) {
      throw new Error(`processes still alive after close: ${alive.join(', ')}`);
    }
  }

  private async addServices(kind: ServiceKind, count: number): Promise<void> {
    const list = kind === 'gateway' ? this.gateways : kind === 'loop-worker' ? this.workers : this.interactionServices;
    const short = kind === 'loop-worker' ? 'worker' : kind === 'interaction-service' ? 'interactions' : 'gateway';
    for (let i = 1; i <= count; i++) {
      const name = `${short}-${i}`;
      const port = kind === 'gateway' ? await freePort() : undefined;
      const service = new ServiceProcess({
        name,
        kind,
        root: ROOT,
        hook: this.hook,
        logDir: this.dir,
        port,
        env: await this.envFor(name, port),
        onExit: (exit) => {
          this.exits.push(exit);
          if (!service.running) {
            live.delete(service);
          }
        },
        onStart: () => live.add(service),
      });
      list.push(service);
    }
  }

  private async envFor(name: string, port: number | undefined): Promise<NodeJS.ProcessEnv> {
    const inherited = Object.fromEntries(Object.entries(process.env).filter(([key]) => !OWN_ENV.test(key)));
    return {
      ...inherited,
      REDIS_URL: this.redisUrl,
      ...(this.options.redisClusterNodes ? { REDIS_CLUSTER_NODES: this.options.redisClusterNodes.join(',') } : {}),
      PARLEY_PREFIX: this.prefix,
      PARLEY_JWT_SECRET: this.secret,
      PARLEY_AGENTS_DIR: this.agentsDir,
      PARLEY_HOST: '127.0.0.1',
      // Each process its own operations port: the defaults are one per service, so two workers would collide.
      PARLEY_OPS_PORT: String(await freePort()),
      PARLEY_WORKER_ID: name,
      LOG_LEVEL: this.options.logLevel ?? 'info',
      PARLEY_HARNESS_ROOT: ROOT,
      PARLEY_HARNESS_PARENT_PID: String(process.pid),
      ...(port === undefined ? {} : { PORT: String(port) }),
      ...this.options.env,
      ...this.options.serviceEnv?.[name],
    };
  }

  private nth(list: ServiceProcess[], n: number): ServiceProcess {
    const service = list[n - 1];
    if (!service) {
      throw new Error(`no process #${n} (have ${list.map((s) => s.name).join(', ') || 'none'})`);
    }
    return service;
  }
}

/** ts-hook.ts as plain JavaScript in the harness folder, for `node -r`. */
export function compileHook(dir: string): string {
  const cache = join(tmpdir(), 'parley-harness-swc');
  try {
    if (readdirSync(cache).length > CACHE_LIMIT) {
      rmSync(cache, { recursive: true, force: true });
    }
  } catch {
    // No cache yet.
  }
  const file = join(dir, 'ts-hook.js');
  const { code } = transformFileSync(join(__dirname, 'ts-hook.ts'), { swcrc: false, jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } });
  writeFileSync(file, code);
  return file;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
