/** What the watchdog needs of a process: its signals and its exit. */
export interface Stoppable {
  once(signal: 'SIGTERM' | 'SIGINT', listener: () => void): unknown;
  exit(code: number): void;
}

/**
 * After SIGTERM or SIGINT, exits the process if its graceful shutdown has not ended within `boundMs`.
 * Every close in the services is bounded, but a stopping process must exit even if one is not (a
 * Redis client or a BullMQ worker that never settles after Redis restarted under it): a job it still
 * held is taken over by another process, so nothing is lost.
 */
export function exitIfShutdownHangs(boundMs: number, target: Stoppable = process, log: (line: string) => void = console.error): void {
  const arm = (signal: string): void => {
    setTimeout(() => {
      log(`the shutdown after ${signal} did not end within ${boundMs} ms: exiting`);
      target.exit(1);
    }, boundMs).unref();
  };
  target.once('SIGTERM', () => arm('SIGTERM'));
  target.once('SIGINT', () => arm('SIGINT'));
}
