import { spawn, type ChildProcess } from 'node:child_process';
import readline from 'node:readline';

export interface ServiceExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** One Parley service running as a child Node.js process, its output handed over line by line. */
export class ServiceProcess {
  readonly exited: Promise<ServiceExit>;
  private exit: ServiceExit | undefined;

  private constructor(
    readonly name: string,
    private readonly child: ChildProcess,
    onLine: (line: string) => void,
  ) {
    this.exited = new Promise((resolve) => {
      const done = (info: ServiceExit): void => {
        this.exit ??= info;
        resolve(this.exit);
      };
      child.once('exit', (code, signal) => done({ code, signal }));
      child.once('error', () => done({ code: 127, signal: null }));
    });
    for (const stream of [child.stdout, child.stderr]) {
      if (stream) {
        readline.createInterface({ input: stream }).on('line', onLine);
      }
    }
  }

  /**
   * `detached` puts the child in its own process group: a terminal's Ctrl-C then reaches only the
   * supervisor, which stops the services in order instead of having them race it.
   */
  static spawn(name: string, entry: string, env: NodeJS.ProcessEnv, onLine: (line: string) => void): ServiceProcess {
    const child = spawn(process.execPath, [entry], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    return new ServiceProcess(name, child, onLine);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return this.exit === undefined && this.child.pid !== undefined;
  }

  /** SIGTERM, then SIGKILL if still running after `timeoutMs`; resolves with how it ended once it has exited. */
  async stop(timeoutMs: number): Promise<'stopped' | 'killed'> {
    if (!this.running) {
      return 'stopped';
    }
    this.child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<true>((resolve) => {
      timer = setTimeout(() => resolve(true), timeoutMs);
    });
    const late = await Promise.race([this.exited.then(() => false), timedOut]);
    clearTimeout(timer);
    if (!late) {
      return 'stopped';
    }
    this.kill();
    await this.exited;
    return 'killed';
  }

  kill(): void {
    if (this.running) {
      this.child.kill('SIGKILL');
    }
  }
}

export function describeExit({ code, signal }: ServiceExit): string {
  return signal ? `signal ${signal}` : `code ${code}`;
}
