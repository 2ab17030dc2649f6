import type { Writable } from 'node:stream';
import { escapeControls } from './text';

/**
 * Writes streamed text and whole lines to one terminal stream without gluing a line onto unfinished
 * text. Control characters are escaped: much of what is written comes from a model.
 */
export class TextOutput {
  private atLineStart = true;

  constructor(private readonly stream: Writable) {}

  text(chunk: string): void {
    if (chunk === '') {
      return;
    }
    const safe = escapeControls(chunk);
    this.stream.write(safe);
    this.atLineStart = safe.endsWith('\n');
  }

  line(text: string): void {
    this.breakLine();
    this.stream.write(`${escapeControls(text)}\n`);
  }

  breakLine(): void {
    if (!this.atLineStart) {
      this.stream.write('\n');
      this.atLineStart = true;
    }
  }
}
