import type { LogEntry } from '@parley/contracts';
import type { RunEnding } from '@parley/store';
import { checkToolInput, prepareFinish } from '@parley/tools';

/**
 * The ending a run's log already records: the newest model turn called `finish` (or `needs_input`)
 * and that call's successful result is in the log, yet the run is being advanced. Its worker died
 * between appending the result and the end-run script (found by `npm run chaos`); the run must end
 * now, as it would have, instead of asking the model for another turn.
 */
export function recordedEnding(entries: readonly LogEntry[]): RunEnding | null {
  let turn: Extract<LogEntry, { type: 'assistant' }> | undefined;
  for (let i = entries.length - 1; i >= 0 && !turn; i--) {
    const entry = entries[i];
    if (entry.type === 'assistant') {
      turn = entry;
    }
  }
  const call = turn?.toolCalls.find((c) => c.name === 'finish' || c.name === 'needs_input');
  if (!call) {
    return null;
  }
  const result = entries.find((e): e is Extract<LogEntry, { type: 'tool_result' }> => e.type === 'tool_result' && e.effectId === call.effectId);
  if (!result || result.isError || !isOk(result.content)) {
    return null;
  }
  if (call.name === 'finish') {
    const prepared = prepareFinish(call.input);
    return prepared.ok ? { status: 'finished', reason: 'finish', summary: prepared.summary } : null;
  }
  const checked = checkToolInput('needs_input', call.input);
  return checked.ok ? { status: 'finished', reason: 'needs_input', summary: String(checked.value.missing) } : null;
}

/** A refusal or a checkpoint's "revise" is recorded too, with ok false: the run goes on then. */
function isOk(content: string): boolean {
  try {
    return (JSON.parse(content) as { ok?: unknown }).ok === true;
  } catch {
    return false;
  }
}
