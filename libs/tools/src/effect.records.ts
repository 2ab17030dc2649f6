import { errorResult, type ToolResult } from './tool-result';

/**
 * A run's effect records: one result per effect id, written fenced by the run's lease, a repeat
 * returning the first (the shell tool commits its file changes with its result here too).
 */
export interface EffectRecords {
  /** The recorded result of this effect id, when it was already committed (a retried step). */
  recorded(effectId: string): Promise<string | null>;
  /** Applies writes and deletes together once per effect id and records `result` as its result; a repeat returns the first result. Rejected (e.g. workspace full) changes nothing. */
  commit(
    effectId: string,
    changes: { writes: Array<{ path: string; content: string }>; deletes: string[] },
    result: string,
  ): Promise<{ status: 'applied' | 'replayed'; result: string } | { status: 'rejected'; error: string }>;
}

const NO_CHANGE = { writes: [], deletes: [] };

/**
 * Runs `send`, an effect outside Parley, at most once per effect id: its result is recorded under the
 * id before the step writes it to the log, so a step retried after the send (its worker died, or the
 * append's reply was lost) replays that result. `unsafe` (a POST, named): the send is marked before it
 * starts, and a retry that finds the mark and no result (its worker stopped mid-send) does not send
 * again; it says the request may have been received.
 */
export async function atMostOnce(records: EffectRecords, effectId: string, unsafe: string | null, send: () => Promise<ToolResult>): Promise<ToolResult> {
  const recorded = await records.recorded(effectId);
  if (recorded !== null) {
    return fromRecord(recorded);
  }
  if (unsafe !== null && (await records.commit(`${effectId}:sent`, NO_CHANGE, 'sent')).status !== 'applied') {
    const error = `the worker sending this ${unsafe} stopped before its response was recorded: the server may or may not have received it, and it is not sent again (Idempotency-Key ${effectId})`;
    return keep(records, effectId, errorResult(error, false));
  }
  return keep(records, effectId, await send());
}

async function keep(records: EffectRecords, effectId: string, result: ToolResult): Promise<ToolResult> {
  const kept = await records.commit(effectId, NO_CHANGE, JSON.stringify(result));
  return kept.status === 'rejected' ? result : fromRecord(kept.result);
}

function fromRecord(record: string): ToolResult {
  const { content, isError } = JSON.parse(record) as ToolResult;
  return { content, isError };
}
