// What the run repository takes and answers: leases, new runs, endings and the results of its fenced steps.
import type { EndReason, Run } from '@parley/contracts';

/** The right to advance one run, as held by one worker. */
export interface Lease {
  tenant: string;
  runId: string;
  owner: string;
  token: string;
}

/**
 * `acquired` carries the run as it stands under the new lease, how many messages wait for it,
 * whether a stop was asked before (a run handed back or taken over keeps the flag) and the run's log
 * entries as stored (JSON) from the `logFrom` the acquire was given on, and, when the lease of
 * another worker ran out (a takeover), that worker's id; `idle` names a sub-agent's parent.
 */
export type AcquireResult =
  | { status: 'acquired'; run: Run; pendingMessages: number; stopAsked: boolean; logLines: string[]; takenOverFrom?: string }
  | { status: 'busy'; retryInMs: number }
  | { status: 'idle'; runStatus: string; parentRunId?: string };
/** A renewed lease says whether a stop was asked meanwhile: its holder gives up what it waits on (a model call) and ends the run. */
export type RenewResult = 'held' | 'stop_requested' | 'lost';
/** `previousSha1`: the SHA-1 (hex) of the log entry before the appended ones as stored (null: the log was empty, or nothing was appended). */
export type AppendResult =
  | { status: 'ok'; length: number; previousSha1: string | null }
  | { status: 'lost' }
  /** A stop was asked: nothing was appended, or (`recorded`) only the record of what had already happened. */
  | { status: 'cancelled'; recorded?: { length: number; previousSha1: string | null } };
/** `deadlineTimer`: the due time (epoch ms) of a deadline timer job the caller must schedule, or null. */
export type ParkResult = { status: 'parked'; deadlineTimer: number | null } | { status: 'continue' } | { status: 'lost' } | { status: 'cancelled' };
/** A sub-agent that ended woke its parent: the caller enqueues the parent's job with this counter. */
export interface ParentWake {
  runId: string;
  wake: number;
}
/** `stop`: a stop was asked of the run the caller holds; it must stop it instead of ending it. */
export type EndResult = { status: 'ended'; parentWake: ParentWake | null } | { status: 'lost' } | { status: 'already' } | { status: 'stop' };
export type CancelResult =
  | { status: 'cancelled'; parentWake: ParentWake | null }
  | { status: 'requested' }
  | { status: 'already'; runStatus: string }
  | { status: 'stale' };
export interface NewRun {
  tenant: string;
  runId: string;
  owner: string;
  agent: string;
  task: string;
  trigger: Run['trigger'];
  unattended?: boolean;
  /** A sub-agent: its parent, and the parent's lease, which must still be held to start it. */
  parentRunId?: string;
  parentLeaseToken?: string;
  /** The agent's first stage, when it declares stages. */
  stage?: string;
  /** A tenant agent: the version the run keeps for its whole life. */
  agentDigest?: string;
  /** A start with an idempotency key: who sent it and the key (see RedisKeys.startKey). */
  startKey?: { caller: string; key: string };
}

export type RunEnding =
  | { status: 'finished'; reason: EndReason; summary?: string }
  | { status: 'failed'; reason: EndReason; error: string };
