import { ErrorCode } from 'bullmq';

/** BullMQ's lock extender, for each job whose lock it could not extend (no error code). */
const RENEWAL_FAILED = /^could not renew lock for job (\S+)$/;
/** BullMQ's finishedErrors for ErrorCode.JobLockNotExist and JobLockMismatch: "… for job <id>. <command> …". */
const LOCK_GONE = /^(?:Missing lock|Lock mismatch) for job (\S+?)\. /;

/**
 * The job whose lock this worker lost, when a worker 'error' says only that; undefined for any
 * other error. A lost lock is what a takeover leaves behind: the process stalled past its lock,
 * BullMQ gave the job to another worker, and the run lease fenced this one off. Matched on
 * BullMQ's own codes and messages, so nothing else is mistaken for it.
 */
export function lostLockJobId(error: unknown): string | undefined {
  if (!(error instanceof Error)) {
    return undefined;
  }
  const code = (error as { code?: unknown }).code;
  if (code === undefined) {
    return RENEWAL_FAILED.exec(error.message)?.[1];
  }
  if (code === ErrorCode.JobLockNotExist || code === ErrorCode.JobLockMismatch) {
    return LOCK_GONE.exec(error.message)?.[1];
  }
  return undefined;
}

/**
 * How long after the last sign of a job's lost lock another one is still the same takeover. BullMQ
 * retries a failed renewal every half renewal time for as long as the step runs, then fails to
 * move the job on (once or twice): the signs come seconds apart at most.
 */
export const LOST_LOCK_QUIET_MS = 60_000;

/** The jobs whose lost lock was already reported, so that one takeover makes one warning. */
export class LostLocks {
  private readonly lastSeen = new Map<string, number>();

  constructor(private readonly quietMs = LOST_LOCK_QUIET_MS) {}

  /** True for the first sign of `jobId`'s lost lock, false for the ones that follow it. */
  isNew(jobId: string, now = Date.now()): boolean {
    for (const [id, at] of this.lastSeen) {
      if (now - at > this.quietMs) {
        this.lastSeen.delete(id);
      }
    }
    const known = this.lastSeen.has(jobId);
    this.lastSeen.set(jobId, now);
    return !known;
  }
}
