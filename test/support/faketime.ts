import { existsSync } from 'node:fs';

const LIBFAKETIME = ['/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1', '/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1'].find((path) => existsSync(path));

/**
 * The environment that shifts a process's wall clock by `shift` (e.g. "+20s", "-20s") with
 * libfaketime (Debian's `faketime`); its monotonic clock, which timers use, is left alone.
 */
export function shiftedClock(shift: string): Record<string, string> {
  if (!LIBFAKETIME) {
    throw new Error('libfaketime is not installed (apt-get install -y faketime)');
  }
  return { LD_PRELOAD: LIBFAKETIME, FAKETIME: shift, FAKETIME_DONT_FAKE_MONOTONIC: '1' };
}
