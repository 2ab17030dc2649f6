import type { Actor, AgentDefinition, Run, Stage, WaitReason } from '@parley/contracts';
import type { RunEnding } from '@parley/store';
import type { Conversation } from './conversation';

export type SettleResult =
  | { status: 'settled' }
  | { status: 'park'; interactionId: string; waitReason: WaitReason }
  | { status: 'end'; ending: RunEnding }
  /** An abort option at a checkpoint: the run stops at once, no further model call. */
  | { status: 'stop'; by: Actor }
  | { status: 'lost' }
  | { status: 'cancelled' };

/** What the dispatcher knows of the run it settles. */
export interface RunView {
  run: Run;
  agent: AgentDefinition;
  /** The stage the run is in (agents with stages). */
  stage: Stage | undefined;
  conversation: Conversation;
}
