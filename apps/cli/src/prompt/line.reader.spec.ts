import { PassThrough } from 'node:stream';
import { CapturedOutput } from '../testing/cli.harness';
import { EndOfInputError, LineReader, PromptCancelledError } from './line.reader';

describe('LineReader (non-terminal)', () => {
  it('queues lines typed ahead and echoes each after its prompt', async () => {
    const input = new PassThrough();
    const output = new CapturedOutput();
    const reader = new LineReader(input, output);
    input.write('one\ntwo\n');
    await new Promise((resolve) => setImmediate(resolve));
    await expect(reader.read('a> ')).resolves.toBe('one');
    await expect(reader.read('b> ')).resolves.toBe('two');
    expect(output.text).toBe('a> one\nb> two\n');
    reader.close();
  });

  it('waits for a line that has not arrived yet', async () => {
    const input = new PassThrough();
    const reader = new LineReader(input, new CapturedOutput());
    const pending = reader.read('> ');
    input.write('later\n');
    await expect(pending).resolves.toBe('later');
    reader.close();
  });

  it('rejects with PromptCancelledError on abort and keeps later lines for the next prompt', async () => {
    const input = new PassThrough();
    const output = new CapturedOutput();
    const reader = new LineReader(input, output);
    const controller = new AbortController();
    const pending = reader.read('> ', controller.signal);
    controller.abort();
    await expect(pending).rejects.toBeInstanceOf(PromptCancelledError);
    input.write('next\n');
    await expect(reader.read('>> ')).resolves.toBe('next');
    expect(output.text).toBe('> \n>> next\n');
    reader.close();
  });

  it('rejects with EndOfInputError once stdin ends', async () => {
    const input = new PassThrough();
    const reader = new LineReader(input, new CapturedOutput());
    const pending = reader.read('> ');
    input.end('last\n');
    await expect(pending).resolves.toBe('last');
    await expect(reader.read('> ')).rejects.toBeInstanceOf(EndOfInputError);
  });
});
