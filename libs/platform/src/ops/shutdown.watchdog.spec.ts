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
    exitIfShutdownHangs(5_000, target, (line) => lines.push(line));
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
    exitIfShutdownHangs(1_000, target, () => undefined);
    target.emit('SIGINT');
    jest.advanceTimersByTime(1_000);
    expect(target.exits).toEqual([1]);
  });
});
