import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import readline from 'node:readline';

export type ServiceKind = 'gateway' | 'loop-worker' | 'interaction-service';

/** How one process of a service ended; `expected` when the harness stopped or killed it. */
export interface ExitRecord {
  name: string;
  pid: number;
  code: number | null;
  signal: NodeJS.Signals | null;
  at: number;
  expected: boolean;
}

export interface ServiceProcessOptions {
  name: string;
  kind: ServiceKind;
  /** The repository root: the service's sources are run from there. */
  root: string;
  /** The compiled ts-hook.js that lets Node run those sources. */
  hook: string;
  /** Where `<name>.log` is written. */
  logDir: string;
  /** The complete environment of the process. */
  env: NodeJS.ProcessEnv;
  /** The gateway's HTTP port (also in env.PORT), for readiness. */
  port?: number;
  /** @defaultValue 30000 */
  readyTimeoutMs?: number;
  /** Called with every exit, expected or not. */
  onExit?: (exit: ExitRecord) => void;
  /** Called with every start, before readiness. */
  onStart?: () => void;
}

const MAX_LINES = 20_000;

/**
 * One Parley service as a child process: output to `<logDir>/<name>.log` (stderr lines marked
 * `[stderr]`, each start marked by a header) and kept in memory for {@link waitForLine}; readiness
 * is /healthz for a gateway and the "ready" line for the others. Restarts reuse the name, the
 * environment and so the port.
 */
export class ServiceProcess {
  readonly name: string;
  readonly kind: ServiceKind;
  readonly logFile: string;
  readonly exits: ExitRecord[] = [];
  /** Output lines of every start, oldest dropped past 20 000. */
  readonly lines: string[] = [];
  private dropped = 0;
  private child?: ChildProcess;
  private exited?: Promise<ExitRecord>;
  private expectExit = false;
  private starts = 0;
  private readonly out: WriteStream;

  constructor(private readonly options: ServiceProcessOptions) {
    this.name = options.name;
    this.kind = options.kind;
    this.logFile = join(options.logDir, `${options.name}.log`);
    this.out = createWriteStream(this.logFile);
  }

  get pid(): number | undefined {
    return this.running ? this.child?.pid : undefined;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  get port(): number | undefined {
    return this.options.port;
  }

  /** Its operations server (/metrics, /health). */
  get opsUrl(): string {
    return `http://127.0.0.1:${this.options.env.PARLEY_OPS_PORT}`;
  }

  get url(): string {
    if (this.options.port === undefined) {
      throw new Error(`${this.name} has no HTTP port`);
    }
    return `http://127.0.0.1:${this.options.port}`;
  }

  /** A mark for {@link waitForLine}: only lines printed after it are considered. */
  get lineMark(): number {
    return this.dropped + this.lines.length;
  }

  async start(): Promise<void> {
    if (this.running) {
      throw new Error(`${this.name} is already running (pid ${this.child?.pid})`);
    }
    this.starts += 1;
    this.expectExit = false;
    const entry = join(this.options.root, 'apps', this.kind, 'src', 'main.ts');
    // Node flags NODE_OPTIONS refuses (e.g. --cpu-prof) reach the services through this variable.
    const extraArgs = process.env.PARLEY_HARNESS_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
    const child = spawn(process.execPath, [...extraArgs, '--enable-source-maps', '-r', this.options.hook, entry], {
      cwd: this.options.root,
      env: this.options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    this.options.onStart?.();
    this.append(`--- ${this.name} start #${this.starts}, pid ${child.pid ?? '?'}, ${new Date().toISOString()} ---`);
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        const record: ExitRecord = { name: this.name, pid: child.pid ?? -1, code, signal, at: Date.now(), expected: this.expectExit };
        this.exits.push(record);
        this.append(`--- ${this.name} pid ${record.pid} exited (${signal ?? `code ${code}`}${record.expected ? '' : ', UNEXPECTED'}) ---`);
        this.options.onExit?.(record);
        resolve(record);
      });
    });
    readline.createInterface({ input: child.stdout }).on('line', (line) => this.append(line));
    readline.createInterface({ input: child.stderr }).on('line', (line) => this.append(`[stderr] ${line}`));
    try {
      await this.waitUntilReady(this.options.readyTimeoutMs ?? 30_000);
    } catch (error) {
      await this.kill9();
      throw new Error(`${(error as Error).message}\n--- last lines of ${this.logFile} ---\n${this.tail(30)}`, { cause: error });
    }
  }

  /** Graceful: SIGCONT (a paused process cannot act on SIGTERM), SIGTERM, then SIGKILL after `timeoutMs`. */
  async stop(timeoutMs = 10_000): Promise<'stopped' | 'killed' | 'not running'> {
    if (!this.running) {
      return 'not running';
    }
    this.expectExit = true;
    this.signal('SIGCONT');
    this.signal('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const late = await Promise.race([
      this.exited!.then(() => false),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (!late) {
      return 'stopped';
    }
    await this.kill9();
    return 'killed';
  }

  /** A crash: SIGKILL, resolved once the process is gone. */
  async kill9(): Promise<ExitRecord | undefined> {
    if (!this.running) {
      return this.exits.at(-1);
    }
    this.expectExit = true;
    this.signal('SIGKILL');
    return this.exited;
  }

  /** For a process `exit` handler, where nothing can be awaited. */
  killNow(): void {
    if (this.running) {
      this.expectExit = true;
      this.signal('SIGKILL');
    }
  }

  /** SIGSTOP: the process stays alive, holding its sockets, but does nothing until {@link resume}. */
  pause(): void {
    this.signal('SIGSTOP');
  }

  resume(): void {
    this.signal('SIGCONT');
  }

  /** Stops the process if it runs, then starts it again with the same environment (and port). */
  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  /** Resolves with the first line after `after` (a {@link lineMark}) that `match` accepts. */
  async waitForLine(match: (line: string) => boolean, { after = 0, timeoutMs = 20_000 } = {}): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const start = Math.max(0, after - this.dropped);
      const found = this.lines.slice(start).find(match);
      if (found !== undefined) {
        return found;
      }
      if (Date.now() > deadline) {
        throw new Error(`${this.name}: no matching output line within ${timeoutMs} ms (log: ${this.logFile})`);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** Output lines that are JSON objects (pino logs), parsed, after `after`. */
  jsonLines(after = 0): Array<Record<string, unknown>> {
    return this.lines.slice(Math.max(0, after - this.dropped)).flatMap((line) => {
      if (!line.startsWith('{')) {
        return [];
      }
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
  }

  /** Flushes and closes the log file; call once the process is gone for good. */
  closeLog(): Promise<void> {
    return new Promise((resolve) => this.out.end(resolve));
  }

  tail(count: number): string {
    return this.lines.slice(-count).join('\n');
  }

  describe(): string {
    const state = this.running ? `running, pid ${this.child?.pid}` : 'not running';
    const exits = this.exits.map((e) => `${e.pid}:${e.signal ?? `code ${e.code}`}${e.expected ? '' : ' UNEXPECTED'}`).join(', ');
    return `${this.name} (${state}${exits ? `; exits ${exits}` : ''}) log ${this.logFile}`;
  }

  private signal(signal: NodeJS.Signals): void {
    try {
      this.child?.kill(signal);
    } catch {
      // Already gone: the exit record says how.
    }
  }

  private append(line: string): void {
    this.lines.push(line);
    if (this.lines.length > MAX_LINES) {
      this.lines.shift();
      this.dropped += 1;
    }
    if (!this.out.writableEnded) {
      this.out.write(`${line}\n`);
    }
  }

  private async waitUntilReady(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    const mark = this.lineMark;
    const readyLine = new RegExp(`^${this.kind} ready\\b`);
    for (;;) {
      if (!this.running) {
        const exit = this.exits.at(-1);
        throw new Error(`${this.name} exited (${exit?.signal ?? `code ${exit?.code}`}) before it was ready`);
      }
      if (this.kind === 'gateway' ? await this.healthy() : this.lines.slice(Math.max(0, mark - this.dropped)).some((l) => readyLine.test(l))) {
        return;
      }
      if (Date.now() > deadline) {
        throw new Error(`${this.name} was not ready within ${timeoutMs} ms`);
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  private async healthy(): Promise<boolean> {
    try {
      const response = await fetch(`${this.url}/healthz`, { signal: AbortSignal.timeout(1000) });
      return response.status === 200;
    } catch {
      return false;
    }
  }
}
