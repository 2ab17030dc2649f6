import type { AgentCatalog } from '@parley/agents';
import type { AgentDefinition } from '@parley/contracts';
import type { ModelAdapter } from '@parley/models';
import type { Logger } from '@parley/platform';
import type { ParleyQueues, ParleyStore, RunControl } from '@parley/store';

/** What the engine's parts share instead of importing each other. */
export interface EngineResources {
  store: ParleyStore;
  queues: ParleyQueues;
  control: RunControl;
  agents: AgentCatalog;
  modelFor(agent: AgentDefinition): ModelAdapter;
  logger: Logger;
  limits: { workspaceMaxFileBytes: number; workspaceMaxBytes: number };
}

/** How one advance of a run ended; every value is an expected outcome, not an error. */
export type AdvanceOutcome =
  | { status: 'parked'; interactionId: string }
  | { status: 'ended'; runStatus: 'finished' | 'failed' | 'cancelled' }
  | { status: 'busy'; retryInMs: number }
  | { status: 'idle'; runStatus: string }
  | { status: 'lost' };
