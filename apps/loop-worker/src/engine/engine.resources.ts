import type { RunAgents } from '@parley/agents';
import type { AgentDefinition } from '@parley/contracts';
import type { ModelAdapter } from '@parley/models';
import type { Logger } from '@parley/platform';
import type { ParleyQueues, ParleyStore, RunControl } from '@parley/store';
import type { RecentLogs } from './held.log';

/** What the engine's parts share instead of importing each other. */
export interface EngineResources {
  store: ParleyStore;
  queues: ParleyQueues;
  control: RunControl;
  /** The run's own agent (a tenant agent's version, powers as they stand) and the global ones. */
  agents: RunAgents;
  modelFor(agent: AgentDefinition): ModelAdapter;
  logger: Logger;
  /** This worker's id: written to the run's `worker` field when it takes the lease, and logged per step. */
  workerId: string;
  limits: { workspaceMaxFileBytes: number; workspaceMaxBytes: number };
  /** A step whose model call failed retryably is tried again `steps` times, after `firstDelayMs` doubling. */
  modelRetry: { steps: number; firstDelayMs: number };
  /** The logs of the runs this worker advanced last (each step reads only what was added since). */
  logs: RecentLogs;
}

/** How one advance of a run ended; every value is an expected outcome, not an error. */
export type AdvanceOutcome =
  | { status: 'parked'; interactionId: string }
  | { status: 'ended'; runStatus: 'finished' | 'failed' | 'cancelled' }
  | { status: 'busy'; retryInMs: number }
  | { status: 'idle'; runStatus: string }
  | { status: 'lost' }
  /** The worker is shutting down: the run went back to the queue between two steps. */
  | { status: 'released' }
  /** The model call failed in a way that may pass: the run went back to the queue, to be tried again in `retryInMs`. */
  | { status: 'retry'; retryInMs: number; modelRetry: { turn: number; count: number } };
