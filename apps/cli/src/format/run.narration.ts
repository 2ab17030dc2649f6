import type { EndReason, ParleyEvent } from '@parley/contracts';
import { formatDiscarded, formatInjected, formatProceeded, formatStageMove, formatStopRequested, formatToolCall, formatToolResult } from './event.format';
import { formatActor } from './interaction.format';
import { brief } from './text';

/** Events `parley run` only tells about, one line each, as it follows a run. */
export type NarratedEvent = Extract<
  ParleyEvent,
  { type: 'stage.entered' | 'checkpoint.proceeded' | 'message.received' | 'message.injected' | 'message.discarded' | 'child.started' | 'child.ended' | 'tool.call' | 'tool.result' | 'run.stop_requested' }
>;

export function narration(event: NarratedEvent): string {
  switch (event.type) {
    case 'stage.entered':
      return `── ${formatStageMove(event.data.stage, event.data.from)}`;
    case 'checkpoint.proceeded':
      return `↷ ${formatProceeded(event.data)}`;
    case 'message.received':
      return `✉ message from ${formatActor(event.data.by)}: ${brief(event.data.text, 200)}`;
    case 'message.injected':
      return `✉ ${formatInjected(event.data.messageIds.length)}`;
    case 'message.discarded':
      return `✉ ${formatDiscarded(event.data.messageIds.length)}`;
    case 'child.started':
      return `⇢ sub-agent ${event.data.agent} started as run ${event.data.childRunId} (follow it with: parley logs ${event.data.childRunId} -f)`;
    case 'child.ended':
      return `⇠ sub-agent run ${event.data.childRunId} ${event.data.status} (${event.data.reason})`;
    case 'tool.call':
      return formatToolCall(event.data.name, event.data.input);
    case 'tool.result':
      return formatToolResult(event.data.name, event.data.isError, event.data.content);
    case 'run.stop_requested':
      return `■ ${formatStopRequested(event.data.by)}`;
  }
}

/** Ends whose reason alone says little get a few words of explanation. */
export function explainEnd(reason: EndReason): string {
  switch (reason) {
    case 'needs_input':
      return ' — it needs information only a person can give';
    case 'checkpoint_expired':
      return ' — a checkpoint that needed a person expired';
    case 'finish':
    case 'no_tool_calls':
    case 'max_iterations':
    case 'cancelled':
    case 'model_error':
    case 'internal_error':
      return '';
  }
}
