import { Writable } from 'node:stream';
import pino from 'pino';
import { PinoNestLogger } from './nest-logger';

function capture(): { logger: PinoNestLogger; lines: () => Array<Record<string, unknown>> } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  const logger = new PinoNestLogger(pino({ name: 'svc', level: 'trace' }, stream));
  return {
    logger,
    lines: () => chunks.join('').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

describe('PinoNestLogger', () => {
  it('writes one JSON object per line, with the Nest context as a field', () => {
    const { logger, lines } = capture();
    logger.log('worker started', 'RunProcessor');
    expect(lines()).toEqual([expect.objectContaining({ level: 30, name: 'svc', msg: 'worker started', context: 'RunProcessor' })]);
  });

  it('turns an object message into fields, ids included', () => {
    const { logger, lines } = capture();
    logger.warn({ msg: 'deadline fired', tenant: 'acme', runId: 'r1', interactionId: 'i1' }, 'DeadlineProcessor');
    expect(lines()[0]).toMatchObject({ level: 40, msg: 'deadline fired', tenant: 'acme', runId: 'r1', interactionId: 'i1', context: 'DeadlineProcessor' });
  });

  it('keeps the stack Nest passes with an error, and serialises Error messages', () => {
    const { logger, lines } = capture();
    logger.error('boom', 'Error: boom\n    at x', 'ErrorFilter');
    logger.error(new Error('bad'), 'Other');
    expect(lines()[0]).toMatchObject({ level: 50, msg: 'boom', stack: 'Error: boom\n    at x', context: 'ErrorFilter' });
    expect(lines()[1]).toMatchObject({ level: 50, msg: 'bad', context: 'Other', err: expect.objectContaining({ message: 'bad' }) });
  });

  it("demotes Nest's start-up chatter to debug", () => {
    const { logger, lines } = capture();
    logger.log('Mapped {/v1/runs, POST} route', 'RouterExplorer');
    expect(lines()[0]).toMatchObject({ level: 20 });
  });
});
