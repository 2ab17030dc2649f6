import { EventEmitter } from 'node:events';
import { exitIfShutdownHangs, type Stoppable } from './shutdown.watchdog';

describe('exitIfShutdownHangs', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  function process(): Stoppable & EventEmitter & { exits: number[] } {
    const emitter = new EventEmitter() as EventEmitter & { exits: number[]; exit: (code: number) => void };
    emitter.exits = [];
    emitter.exit = (code) => emitter.exits.push(code);
    return emitter;
  }

  it('exits with 1, saying so, when the shutdown a signal started is still going once the bound is over', () => {
    const target = process();
    const lines: string[] = [];
    exitIfShutdownHangs(5_000, { target, log: (line) => lines.push(line) });
    jest.advanceTimersByTime(60_000);
    expect(target.exits).toEqual([]); // no signal, no watchdog
    target.emit('SIGTERM');
    jest.advanceTimersByTime(4_999);
    expect(target.exits).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(target.exits).toEqual([1]);
    expect(lines).toEqual(['the shutdown after SIGTERM did not end within 5000 ms: exiting']);
  });

  it('arms on SIGINT too', () => {
    const target = process();
    exitIfShutdownHangs(1_000, { target, log: () => undefined });
    target.emit('SIGINT');
    jest.advanceTimersByTime(1_000);
    expect(target.exits).toEqual([1]);
  });

  it('waits the bound past the work it is told to hold for, looked at again when the bound is reached', () => {
    const target = process();
    const lines: string[] = [];
    let holdUntil = 0;
    exitIfShutdownHangs(5_000, { target, log: (line) => lines.push(line), holdUntil: () => holdUntil });
    target.emit('SIGTERM');
    // A tool call that must be over 20 s after the signal starts 1 s after it.
    jest.advanceTimersByTime(1_000);
    holdUntil = Date.now() + 19_000;
    jest.advanceTimersByTime(24_000 - 1); // the bound, 5 s, past that hold
    expect(target.exits).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(target.exits).toEqual([1]);
    expect(lines).toEqual(['the shutdown after SIGTERM did not end within 25000 ms: exiting']);
  });
});
