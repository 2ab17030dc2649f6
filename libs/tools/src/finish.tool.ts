import { checkInput, isRecord, trimAndBound } from './tool.input';
import { FINISH_SUMMARY_MAX_BYTES } from './tool.limits';
import { FinishInputSchema } from './tool.schemas';

export type PreparedFinish = { ok: true; summary: string } | { ok: false; error: string };

/** The summary of a `finish` call, trimmed and cut to FINISH_SUMMARY_MAX_BYTES; an empty one, or an unknown field, is refused. */
export function prepareFinish(input: unknown): PreparedFinish {
  // Spread first, so that the strict schema refuses a field it does not know instead of losing it.
  const normalised = isRecord(input) ? { ...input, summary: trimAndBound(input.summary, FINISH_SUMMARY_MAX_BYTES) } : input;
  const checked = checkInput('finish', FinishInputSchema, normalised);
  return checked.ok ? { ok: true, summary: checked.value.summary } : checked;
}

/** The summary of a run that ended on a reply without a call: its text, trimmed and bounded as a `finish` summary is; none when blank. */
export function summaryOfReply(text: string): string | undefined {
  const summary = trimAndBound(text, FINISH_SUMMARY_MAX_BYTES) as string;
  return summary === '' ? undefined : summary;
}
