import { PassThrough, Writable } from 'node:stream';
import { runCli, type CliIo } from '../cli.program';

/** A Writable that keeps everything written to it. */
export class CapturedOutput extends Writable {
  text = '';

  override _write(chunk: Buffer | string, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.text += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    callback();
  }
}

/** One in-process invocation of the CLI with captured output and a stdin the test can type into. */
export class CliSession {
  readonly stdin = new PassThrough();
  readonly stdout = new CapturedOutput();
  readonly stderr = new CapturedOutput();
  readonly exit: Promise<number>;

  /** `tty` marks streams as a terminal, as when the CLI runs in one (stdout redirected, say, but not stderr). */
  constructor(argv: string[], env: Record<string, string | undefined>, tty: { stdout?: boolean; stderr?: boolean } = {}) {
    Object.assign(this.stdout, { isTTY: tty.stdout === true });
    Object.assign(this.stderr, { isTTY: tty.stderr === true });
    const io: CliIo = { stdin: this.stdin, stdout: this.stdout, stderr: this.stderr, env };
    this.exit = runCli(argv, io);
  }

  get out(): string {
    return this.stdout.text;
  }

  get err(): string {
    return this.stderr.text;
  }

  type(...lines: string[]): void {
    for (const line of lines) {
      this.stdin.write(`${line}\n`);
    }
  }
}

/** Polls until `predicate` holds; fails with `what` after `timeoutMs`. */
export async function waitFor(predicate: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
