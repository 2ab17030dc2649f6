import { clearLine, createInterface, cursorTo, type Interface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';

/** The prompt was withdrawn (the interaction got resolved elsewhere, or the run ended). */
export class PromptCancelledError extends Error {
  constructor() {
    super('prompt cancelled');
    this.name = 'PromptCancelledError';
  }
}

/** stdin is closed: nobody can answer from this terminal any more. */
export class EndOfInputError extends Error {
  constructor() {
    super('end of input');
    this.name = 'EndOfInputError';
  }
}

export interface LineSource {
  /** Shows `prompt` and resolves with the next line; rejects on abort or end of input. */
  read(prompt: string, signal?: AbortSignal): Promise<string>;
  /** Called before a new question: forgets lines typed at a terminal since the last read; returns how many. */
  discardTypeAhead(): number;
}

interface Waiter {
  resolve: (line: string) => void;
  reject: (error: Error) => void;
}

function isTty(stream: Readable | Writable): boolean {
  return (stream as { isTTY?: boolean }).isTTY === true;
}

/**
 * Lines from stdin. Lines that arrive while nobody is asking are queued rather than dropped, so
 * answers can be piped in ahead of the questions; at a terminal, the queue is dropped before each
 * new question (discardTypeAhead), so a stray line cannot answer a question nobody has seen yet.
 * On a non-terminal the consumed line is echoed after the prompt, which keeps transcripts readable.
 */
export class LineReader implements LineSource {
  private readonly rl: Interface;
  private readonly terminal: boolean;
  private readonly typedAtTerminal: boolean;
  private readonly queued: string[] = [];
  private waiter?: Waiter;
  private ended = false;

  constructor(
    input: Readable,
    private readonly output: Writable,
    onInterrupt?: () => void,
  ) {
    this.typedAtTerminal = isTty(input);
    this.terminal = this.typedAtTerminal && isTty(output);
    this.rl = createInterface({ input, output: this.terminal ? output : undefined, terminal: this.terminal });
    this.rl.on('line', (line) => this.push(line));
    this.rl.on('close', () => this.end());
    if (onInterrupt !== undefined) {
      // In raw mode Ctrl+C reaches readline instead of raising SIGINT.
      this.rl.on('SIGINT', onInterrupt);
    }
  }

  read(prompt: string, signal?: AbortSignal): Promise<string> {
    if (signal?.aborted === true) {
      return Promise.reject(new PromptCancelledError());
    }
    if (this.waiter !== undefined) {
      return Promise.reject(new Error('a prompt is already waiting for input'));
    }
    this.showPrompt(prompt);
    const line = this.queued.shift();
    if (line !== undefined) {
      this.echo(line);
      return Promise.resolve(line);
    }
    if (this.ended) {
      this.output.write('\n');
      return Promise.reject(new EndOfInputError());
    }
    return new Promise<string>((resolve, reject) => {
      const onAbort = (): void => {
        this.waiter = undefined;
        this.withdrawPrompt();
        reject(new PromptCancelledError());
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiter = {
        resolve: (value) => {
          signal?.removeEventListener('abort', onAbort);
          this.echo(value);
          resolve(value);
        },
        reject: (error) => {
          signal?.removeEventListener('abort', onAbort);
          reject(error);
        },
      };
    });
  }

  discardTypeAhead(): number {
    if (!this.typedAtTerminal) {
      return 0;
    }
    return this.queued.splice(0).length;
  }

  close(): void {
    this.rl.close();
  }

  private push(line: string): void {
    const waiter = this.waiter;
    if (waiter === undefined) {
      this.queued.push(line);
      return;
    }
    this.waiter = undefined;
    waiter.resolve(line);
  }

  private end(): void {
    this.ended = true;
    const waiter = this.waiter;
    if (waiter !== undefined) {
      this.waiter = undefined;
      this.output.write('\n');
      waiter.reject(new EndOfInputError());
    }
  }

  private showPrompt(prompt: string): void {
    if (this.terminal) {
      this.rl.setPrompt(prompt);
      this.rl.prompt();
    } else {
      this.output.write(prompt);
    }
  }

  /** Also forgets the prompt on a terminal, so a later redraw by readline cannot show a stale one. */
  private echo(line: string): void {
    if (this.terminal) {
      this.rl.setPrompt('');
    } else {
      this.output.write(`${line}\n`);
    }
  }

  private withdrawPrompt(): void {
    if (!this.terminal) {
      this.output.write('\n');
      return;
    }
    this.rl.setPrompt('');
    this.rl.write(null, { ctrl: true, name: 'e' });
    this.rl.write(null, { ctrl: true, name: 'u' });
    clearLine(this.output, 0);
    cursorTo(this.output, 0);
  }
}
