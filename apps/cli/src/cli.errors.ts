export const EXIT = {
  ok: 0,
  error: 1,
  usage: 2,
  /** Conventional code for "stopped by Ctrl+C". */
  interrupted: 130,
} as const;

/** The command line was well-formed for commander but does not make sense (exit code 2). */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}
