import type { EventDraft, LogEntry } from '@parley/contracts';
import { errorResult } from '@parley/tools';

/** Stop reasons after which the model is not asked again, with the run's error. */
export const HOPELESS_STOPS: Record<string, string | undefined> = {
  refusal: 'the model declined to go on (stop reason: refusal)',
  model_context_window_exceeded: "the conversation no longer fits the model's context window (stop reason: model_context_window_exceeded)",
};

/**
 * A cut-off turn and an error result for each of its calls (their arguments may be cut short, so none
 * runs), with their events added to `events`.
 */
export function withCallsRefused(turn: Extract<LogEntry, { type: 'assistant' }>, events: EventDraft[], why: string): LogEntry[] {
  const result = errorResult(
    why === 'max_tokens'
      ? `your reply was cut off (stop reason: ${why}) before this call was complete, so no call of that reply ran: send them again, in smaller pieces`
      : `your reply ended with stop reason ${why}, so no call of that reply ran`,
  );
  const entries: LogEntry[] = [turn];
  for (const { toolUseId, effectId, name } of turn.toolCalls) {
    entries.push({ type: 'tool_result', toolUseId, effectId, name, content: result.content, isError: true, at: turn.at });
    events.push({ type: 'tool.result', data: { toolUseId, effectId, name, isError: true, content: result.content } });
  }
  return entries;
}
