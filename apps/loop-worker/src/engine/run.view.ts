import type { Actor, AgentDefinition, InteractionRequest, LogEntry, Run, Stage, WaitReason } from '@parley/contracts';
import type { RunEnding } from '@parley/store';
import { offeredTools } from '@parley/tools';
import type { Conversation } from './conversation';

export type SettleResult =
  | { status: 'settled' }
  /**
   * `open`: the interaction to open in the same step as the park (none when waiting for a child
   * run); `record`: the log entry that asks it, appended in that step too.
   */
  | { status: 'park'; interactionId: string; waitReason: WaitReason; open?: InteractionRequest; record?: LogEntry }
  | { status: 'end'; ending: RunEnding }
  /** An abort option at a checkpoint: the run stops at once, no further model call. */
  | { status: 'stop'; by: Actor }
  | { status: 'lost' }
  | { status: 'cancelled' };

/** A settle that parks the run (on a question, an approval, a checkpoint or a sub-agent). */
export type Parking = Extract<SettleResult, { status: 'park' }>;

/** What the dispatcher knows of the run it settles. */
export interface RunView {
  run: Run;
  agent: AgentDefinition;
  /** The stage the run is in (agents with stages). */
  stage: Stage | undefined;
  conversation: Conversation;
}

/** The tools the model is offered where the run stands (stage, attended or not, sub-agent or not). */
export function toolsOffered(view: Pick<RunView, 'agent' | 'run' | 'stage'>): string[] {
  const { agent, run, stage } = view;
  return offeredTools(agent, { ...(stage ? { stage } : {}), unattended: run.unattended, child: run.parentRunId !== undefined });
}
