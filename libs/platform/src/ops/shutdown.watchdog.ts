/** What the watchdog needs of a process: its signals and its exit. */
export interface Stoppable {
  once(signal: 'SIGTERM' | 'SIGINT', listener: () => void): unknown;
  exit(code: number): void;
}

export interface WatchdogOptions {
  target?: Stoppable;
  log?: (line: string) => void;
  /**
   * Sanctioned work that may outlast the bound (a loop-worker's running tool calls): the epoch ms
   * it must be over by, looked at when the bound is reached; the watchdog waits `boundMs` past it.
   */
  holdUntil?: () => number;
}

/**
 * After SIGTERM or SIGINT, exits the process if its graceful shutdown has not ended within `boundMs`.
 * Every close in the services is bounded, but a stopping process must exit even if one is not (a
 * Redis client or a BullMQ worker that never settles after Redis restarted under it): a job it still
 * held is taken over by another process, so nothing is lost.
 */
export function exitIfShutdownHangs(boundMs: number, { target = process, log = console.error, holdUntil }: WatchdogOptions = {}): void {
  const arm = (signal: string, signalledAt: number, waitMs: number): void => {
    setTimeout(() => {
      const until = Math.max(signalledAt, holdUntil?.() ?? 0) + boundMs;
      if (until > Date.now()) {
        arm(signal, signalledAt, until - Date.now());
        return;
      }
      log(`the shutdown after ${signal} did not end within ${Date.now() - signalledAt} ms: exiting`);
      target.exit(1);
    }, waitMs).unref();
  };
  target.once('SIGTERM', () => arm('SIGTERM', Date.now(), boundMs));
  target.once('SIGINT', () => arm('SIGINT', Date.now(), boundMs));
}
