import type { Writable } from 'node:stream';

/** Writes streamed text and whole lines to one stream without gluing a line onto unfinished text. */
export class TextOutput {
  private atLineStart = true;

  constructor(private readonly stream: Writable) {}

  text(chunk: string): void {
    if (chunk === '') {
      return;
    }
    this.stream.write(chunk);
    this.atLineStart = chunk.endsWith('\n');
  }

  line(text: string): void {
    this.breakLine();
    this.stream.write(`${text}\n`);
  }

  breakLine(): void {
    if (!this.atLineStart) {
      this.stream.write('\n');
      this.atLineStart = true;
    }
  }
}
