import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import readline from 'node:readline';

export type AppendFsync = 'always' | 'everysec' | 'no';

export interface RedisProcessOptions {
  port: number;
  /** Working directory of the server: where its AOF (appendonlydir/) lives. */
  dir: string;
  /** @defaultValue false */
  appendonly?: boolean;
  /** @defaultValue 'everysec' */
  appendfsync?: AppendFsync;
  /** Further `--name value` arguments, e.g. `['--loglevel', 'warning']`. */
  extraArgs?: string[];
  /** Receives each line redis-server prints. */
  onLine?: (line: string) => void;
  /** Own process group, so a terminal's Ctrl-C reaches only the supervisor, which stops Redis last. */
  detached?: boolean;
  /** @defaultValue 10000 */
  readyTimeoutMs?: number;
  /** Extra environment of the server (tests shift its clock with libfaketime). */
  env?: Record<string, string>;
}

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export class RedisNotInstalledError extends Error {
  constructor() {
    super(
      'redis-server was not found on PATH. Install Redis (Debian/Ubuntu: `sudo apt-get install redis-server`, ' +
        'macOS: `brew install redis`) or set REDIS_URL to a Redis that is already running.',
    );
    this.name = 'RedisNotInstalledError';
  }
}

export class RedisStartError extends Error {
  constructor(
    message: string,
    /** The last lines redis-server printed. */
    readonly output: string,
  ) {
    super(`${message}${output ? `\n--- redis-server output ---\n${output}` : ''}`);
    this.name = 'RedisStartError';
  }
}

/** Servers still running when this process exits are killed, so a failed test leaves no orphans. */
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of live) {
    child.kill('SIGKILL');
  }
});

/** One running `redis-server` child process, started by {@link startRedisProcess}. */
export class RedisProcess {
  private exitInfo: ExitInfo | undefined;
  private readonly tail: string[] = [];
  readonly exited: Promise<ExitInfo>;

  private constructor(
    private readonly child: ChildProcess,
    readonly port: number,
    onLine: ((line: string) => void) | undefined,
  ) {
    live.add(child);
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        live.delete(child);
        this.exitInfo = { code, signal };
        resolve(this.exitInfo);
      });
    });
    for (const stream of [child.stdout, child.stderr]) {
      if (stream) {
        readline.createInterface({ input: stream }).on('line', (line) => {
          this.tail.push(line);
          if (this.tail.length > 40) {
            this.tail.shift();
          }
          onLine?.(line);
        });
      }
    }
  }

  static async start(options: RedisProcessOptions): Promise<RedisProcess> {
    const args = [
      '--port', String(options.port),
      '--bind', '127.0.0.1',
      '--dir', options.dir,
      '--daemonize', 'no',
      '--save', '',
      '--appendonly', options.appendonly ? 'yes' : 'no',
      '--appendfsync', options.appendfsync ?? 'everysec',
      ...(options.extraArgs ?? []),
    ];
    const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'], detached: options.detached ?? false, env: { ...process.env, ...options.env } });
    if (child.pid === undefined) {
      const error = await new Promise<NodeJS.ErrnoException>((resolve) => child.once('error', resolve));
      throw error.code === 'ENOENT' ? new RedisNotInstalledError() : error;
    }
    const server = new RedisProcess(child, options.port, options.onLine);
    await server.waitUntilReady(options.readyTimeoutMs ?? 10_000);
    return server;
  }

  get pid(): number {
    return this.child.pid!;
  }

  get running(): boolean {
    return this.exitInfo === undefined;
  }

  get output(): string {
    return this.tail.join('\n');
  }

  /**
   * Graceful stop: on SIGTERM Redis flushes and fsyncs its AOF, then exits. SIGKILL follows only
   * if it has not exited after `timeoutMs`. Resolves with how it ended.
   */
  async stop(timeoutMs = 10_000): Promise<'stopped' | 'killed'> {
    if (!this.running) {
      return 'stopped';
    }
    this.child.kill('SIGTERM');
    const ended = await Promise.race([this.exited.then(() => true), delay(timeoutMs).then(() => false)]);
    if (ended) {
      return 'stopped';
    }
    await this.kill9();
    return 'killed';
  }

  /** A crash: no flush, whatever the last fsync did not reach the disk is gone. */
  async kill9(): Promise<void> {
    if (this.running) {
      this.child.kill('SIGKILL');
    }
    await this.exited;
  }

  private async waitUntilReady(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.exitInfo) {
        const how = this.exitInfo.signal ?? `code ${this.exitInfo.code}`;
        throw new RedisStartError(`redis-server exited (${how}) before answering PING on 127.0.0.1:${this.port}`, this.output);
      }
      if (await pingPort(this.port)) {
        return;
      }
      if (Date.now() > deadline) {
        await this.kill9();
        throw new RedisStartError(`redis-server did not answer PING on 127.0.0.1:${this.port} within ${timeoutMs} ms`, this.output);
      }
      await delay(25);
    }
  }
}

export function startRedisProcess(options: RedisProcessOptions): Promise<RedisProcess> {
  return RedisProcess.start(options);
}

/**
 * True when 127.0.0.1:port answers an inline PING with +PONG. A raw socket, because a server
 * still loading its AOF answers -LOADING and must count as not ready.
 */
export function pingPort(port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    let reply = '';
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk: Buffer) => {
      reply += chunk.toString('utf8');
      if (reply.includes('\r\n')) {
        done(reply.startsWith('+PONG'));
      }
    });
  });
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
