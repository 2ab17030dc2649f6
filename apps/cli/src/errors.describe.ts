/**
 * The message of anything thrown. Duck-typed: errors from Node internals (fetch) are not
 * `instanceof Error` when the CLI runs inside another realm, e.g. under jest.
 */
export function errorMessage(error: unknown): string {
  if (typeof error === 'object' && error !== null && typeof (error as { message?: unknown }).message === 'string') {
    return (error as { message: string }).message;
  }
  return String(error);
}

/** Node's fetch hides the useful part (ECONNREFUSED, ...) in `cause`. */
export function rootCauseMessage(error: unknown): string {
  const cause = typeof error === 'object' && error !== null ? (error as { cause?: unknown }).cause : undefined;
  const inner = cause === undefined ? '' : errorMessage(cause);
  return inner === '' ? errorMessage(error) : inner;
}
