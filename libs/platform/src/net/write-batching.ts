import type { Writable } from 'node:stream';

const BATCHED = Symbol('parley.writesBatchedPerTick');

type BatchableStream = Writable & { [BATCHED]?: true };

/**
 * Everything written to `stream` within one tick of the event loop goes out as one system call.
 *
 * A busy process sends many commands in the same tick: a batch of Redis replies resumes dozens of
 * awaiting steps, each sending its next command. Node writes each `write()` to the socket at once,
 * a system call per command (a quarter of a loop-worker's CPU). Corked for the rest of the tick,
 * the writes leave together as one `writev` when the tick's callbacks and promise jobs are done,
 * before any I/O is polled, so nothing waits longer than the code already running.
 *
 * Not for a connection that gets one write per tick among thousands (a fan-out to websockets):
 * there it only delays every write to the end of the loop that makes them.
 *
 * Safe to call more than once; nested `cork()`/`uncork()` by the stream's users still work, since
 * corks are counted and the outermost one is this tick's.
 */
export function batchWritesPerTick(stream: Writable): void {
  const target = stream as BatchableStream;
  if (target[BATCHED]) {
    return;
  }
  target[BATCHED] = true;
  const write = stream.write.bind(stream) as (...args: unknown[]) => boolean;
  const destroy = stream.destroy.bind(stream);
  let corked = false;
  const flush = (): void => {
    if (corked) {
      corked = false;
      stream.uncork();
    }
  };
  stream.write = ((...args: unknown[]): boolean => {
    if (!corked && !stream.writableEnded && !stream.destroyed) {
      corked = true;
      stream.cork();
      process.nextTick(flush);
    }
    return write(...args);
  }) as Writable['write'];
  // Written, then destroyed in the same tick (engine.io's 400 to a refused upgrade): what was
  // written goes out first, as it did unbatched.
  stream.destroy = (error?: Error): Writable => {
    if (!stream.destroyed) {
      flush();
    }
    return destroy(error);
  };
}
