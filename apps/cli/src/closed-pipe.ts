import type { Writable } from 'node:stream';

/**
 * A reader that stops reading (`parley logs <run> | head`) closes the pipe the CLI writes to: the
 * next write fails with EPIPE. The CLI then stops quietly, as Unix tools do, instead of dying on an
 * unhandled stream error with a stack trace.
 */
export function exitQuietlyWhenPipeCloses(streams: Writable[], exit: (code: number) => void): void {
  for (const stream of streams) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') {
        throw error;
      }
      exit(0);
    });
  }
}
