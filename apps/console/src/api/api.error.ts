import type { ErrorIssue } from './types';

/** An error reply of the gateway (`{ error: { code, message, details } }`), or a network failure (status 0). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly issues: ErrorIssue[] = [],
  ) {
    super(message);
  }

  /** The reason given for one field (e.g. "input" or "input.path"), if the gateway named it. */
  reasonFor(field: string): string | undefined {
    const hits = this.issues.filter((issue) => issue.field === field || issue.field.startsWith(`${field}.`));
    return hits.length === 0 ? undefined : hits.map((issue) => (issue.field === field ? issue.reason : `${issue.field}: ${issue.reason}`)).join('; ');
  }
}

export function describeError(error: unknown): string {
  if (error instanceof ApiError) {
    return error.message;
  }
  return error instanceof Error ? error.message : String(error);
}
