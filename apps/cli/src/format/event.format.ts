import type { Actor, EventData, ParleyEvent } from '@parley/contracts';
import { parseEvent, type RawEvent } from '../api/event.parse';
import { formatActor, formatCheckpointRef, formatClaim, formatResolution } from './interaction.format';
import { brief, indent } from './text';
import { formatClock } from './time';

export function formatToolCall(name: string, input: unknown): string {
  return `→ ${name} ${brief(input, 100)}`.trimEnd();
}

export function formatToolResult(name: string, isError: boolean, content: string): string {
  return `${isError ? '✗' : '←'} ${name}${isError ? ' failed' : ''}: ${brief(content, 100)}`;
}

/** The part of an event line after its type. */
export function describeEvent(event: ParleyEvent): string {
  switch (event.type) {
    case 'run.created':
      return `agent ${event.data.agent} (${event.data.trigger}): ${brief(event.data.task, 100)}`;
    case 'run.status': {
      const status = event.data.waitReason === undefined ? event.data.status : `${event.data.status} (${event.data.waitReason})`;
      return event.data.stage === undefined ? status : `${status}, stage ${event.data.stage}`;
    }
    case 'stage.entered':
      return event.data.from === null ? `${event.data.stage} (first stage)` : `${event.data.stage} (from ${event.data.from})`;
    case 'checkpoint.proceeded':
      return formatProceeded(event.data);
    case 'message.received':
      return `${event.data.messageId} from ${formatActor(event.data.by)}: ${JSON.stringify(brief(event.data.text, 100))}`;
    case 'message.injected':
      return `${formatInjected(event.data.messageIds.length)}: ${event.data.messageIds.join(', ')}`;
    case 'message.discarded':
      return `${formatDiscarded(event.data.messageIds.length)}: ${event.data.messageIds.join(', ')}`;
    case 'document.updated':
      return `document ${event.data.region} updated by ${event.data.source === 'person' ? 'a person' : 'the model'}`;
    case 'child.started':
      return `sub-agent ${event.data.agent}: run ${event.data.childRunId}`;
    case 'child.ended':
      return `sub-agent run ${event.data.childRunId} ${event.data.status} (${event.data.reason})`;
    case 'message.delta':
      return brief(event.data.text, 100);
    case 'message':
      return indent(event.data.text, '    ').trimStart();
    case 'tool.call':
      return `${event.data.name} ${brief(event.data.input, 100)}`;
    case 'tool.result':
      return `${event.data.name} ${event.data.isError ? 'error' : 'ok'}: ${brief(event.data.content, 100)}`;
    case 'interaction.opened': {
      const { interaction } = event.data;
      const checkpoint = interaction.checkpoint === undefined ? '' : ` (${formatCheckpointRef(interaction.checkpoint)})`;
      return `${interaction.prompt.kind} ${interaction.id}${checkpoint}: ${brief(interaction.prompt.prompt, 100)}`;
    }
    case 'interaction.resolved':
      return `${event.data.interactionId} ${formatResolution(event.data.outcome, event.data.by, event.data.at, event.data.decision)}`;
    case 'interaction.claimed':
      return `${event.data.interactionId} ${formatClaimChange(event.data.claim, event.data.by)}`;
    case 'run.finished':
      return event.data.summary === undefined ? event.data.reason : `${event.data.reason}: ${event.data.summary}`;
    case 'run.failed':
      return `${event.data.reason}: ${event.data.error}`;
    case 'run.cancelled':
      return `${event.data.reason}, by ${formatActor(event.data.by)}`;
    case 'run.stop_requested':
      return formatStopRequested(event.data.by);
  }
}

/** "stage build (from plan)", or "stage plan" for the first one. */
export function formatStageMove(stage: string, from: string | null): string {
  return from === null ? `stage ${stage}` : `stage ${stage} (from ${from})`;
}

/** "checkpoint review of stage plan proceeded without a person: the run is unattended". */
export function formatProceeded(data: EventData<'checkpoint.proceeded'>): string {
  return `checkpoint ${data.point} of stage ${data.stage} proceeded without a person: ${formatProceedWhy(data.why)}`;
}

export function formatProceedWhy(why: EventData<'checkpoint.proceeded'>['why']): string {
  switch (why) {
    case 'round_limit':
      return 'the limit of revision rounds was reached';
    case 'deadline':
      return 'nobody answered before the deadline';
    case 'unattended':
      return 'the run is unattended';
    case 'not_required':
      return 'it is not required in an unattended run';
  }
}

/** A stop asked while a worker held the run. */
export function formatStopRequested(by: Actor): string {
  return `stop asked by ${formatActor(by)}: the run stops at its next step`;
}

/** "1 message passed to the agent", "3 messages passed to the agent". */
export function formatInjected(count: number): string {
  return `${count} message${count === 1 ? '' : 's'} passed to the agent`;
}

export function formatDiscarded(count: number): string {
  return `${count} message${count === 1 ? '' : 's'} never read: the run ended first`;
}

/** "claimed by bob until T", or "claim released by bob". */
export function formatClaimChange(claim: { subject: string; until: string } | null, by: Actor): string {
  return claim === null ? `claim released by ${formatActor(by)}` : formatClaim(claim);
}

/** "#12 10:04:05 tool.call  write_file {...}" — one line per event (a message may span more). */
export function formatEventLine(raw: RawEvent): string {
  const event = parseEvent(raw);
  const at = typeof raw.at === 'string' ? formatClock(raw.at) : '--:--:--';
  const text = event === undefined ? '(not understood by this CLI)' : describeEvent(event);
  return `#${raw.seq} ${at} ${raw.type.padEnd(20)} ${text}`.trimEnd();
}
