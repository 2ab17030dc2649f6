export interface WaitForOptions {
  /** @defaultValue 15000 */
  timeoutMs?: number;
  /** @defaultValue 20 */
  intervalMs?: number;
  /** What was awaited, for the timeout error. */
  message?: string;
}

/**
 * Polls `condition` until it returns (or resolves to) a truthy value and returns that value.
 * A throwing condition counts as "not yet"; on timeout the error names the last value or error.
 */
export async function waitFor<T>(
  condition: () => T | Promise<T>,
  { timeoutMs = 15_000, intervalMs = 20, message }: WaitForOptions = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: { value: T } | { error: unknown } | undefined;
  for (;;) {
    try {
      const value = await condition();
      if (value) {
        return value;
      }
      last = { value };
    } catch (error) {
      last = { error };
    }
    if (Date.now() >= deadline) {
      throw new Error(`waitFor timed out after ${timeoutMs} ms: ${message ?? 'condition never became truthy'}; ${describe(last)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

function describe(last: { value: unknown } | { error: unknown } | undefined): string {
  if (!last) {
    return 'condition never ran';
  }
  if ('error' in last) {
    return `last error: ${last.error instanceof Error ? last.error.message : String(last.error)}`;
  }
  return `last value: ${safeStringify(last.value)}`;
}

function safeStringify(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * `work` bounded by `timeoutMs`: a step that never settles fails naming itself, instead of
 * running into the test's own timeout with no clue which step hung. The work itself is not stopped.
 */
export async function within<T>(name: string, timeoutMs: number, work: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const started = Date.now();
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${name}: did not finish within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([work(), expired]);
  } catch (error) {
    if (error instanceof Error && !error.message.startsWith(`${name}:`)) {
      error.message = `${name} (after ${Date.now() - started} ms): ${error.message}`;
    }
    throw error;
  } finally {
    clearTimeout(timer);
  }
}
