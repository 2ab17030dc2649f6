import type { ChoiceOption, InteractionPoint, Prompt } from '@parley/contracts';
import { HUMAN_TOOL_LIMITS, truncateUtf8, utf8ByteLength } from '@parley/tools';
import { declaredChoices, menuChoices, type PointChoice } from './checkpoint.choices';

const QUESTION_BYTES = HUMAN_TOOL_LIMITS.questionBytes;
const DOCUMENT_BYTES = HUMAN_TOOL_LIMITS.documentBytes;
const ELLIPSIS = '…';
/** The options line of a free_text prompt never takes more than half of the question's bytes. */
const HINT_BYTES = Math.floor(QUESTION_BYTES / 2);

export const DOCUMENT_HEADING = '--- Current output ---';

/**
 * The prompt of a checkpoint's decision (purpose `decide`), in the point's style:
 * - multiple_choice: one pick (`multi: false`) among the labels of menuChoices (declared options,
 *   directive keys, edit options, abort options, each once, as declared, plus "Approve"/"Revise"
 *   defaults when fewer than 2); non-approving choices carry a description of what they do.
 *   Labels are not cut: the agent schema bounds them, and a cut label could no longer be matched.
 * - free_text: the question plus a line naming the options the person may type, if any.
 * - confirm: the question.
 *
 * The question part is at most HUMAN_TOOL_LIMITS.questionBytes (2000) of UTF-8. The stage's
 * current output (`document`, if not blank) follows it under DOCUMENT_HEADING in all three
 * styles, cut to HUMAN_TOOL_LIMITS.documentBytes (64 KiB): the person decides about that output
 * whatever the style, and these prompt kinds have no other field to carry it.
 */
export function decidePrompt(point: InteractionPoint, document: string | null): Prompt {
  switch (point.style) {
    case 'multiple_choice':
      return {
        kind: 'multiple_choice',
        prompt: withDocument(clip(point.prompt.trim(), QUESTION_BYTES), document),
        options: menuChoices(point).map(choiceOption),
        multi: false,
      };
    case 'free_text':
      return { kind: 'free_text', prompt: withDocument(questionWithHint(point.prompt, optionsHint(point)), document) };
    case 'confirm':
      return { kind: 'confirm', prompt: withDocument(clip(point.prompt.trim(), QUESTION_BYTES), document) };
  }
}

/**
 * The prompt of an edit round (purpose `edit`): the stage's latest output for the person to
 * rewrite. Their text replaces the whole output, so the document is cut (to 64 KiB) without any
 * marker, and the prompt says so when it was cut.
 */
export function editPrompt(point: InteractionPoint, document: string): Prompt {
  const shown = truncateUtf8(document, DOCUMENT_BYTES);
  const cut = shown.length < document.length ? ' It was longer than 64 KiB and is shown cut: your version replaces all of it.' : '';
  const text = `Edit the stage's output for checkpoint "${point.name}"; your version replaces it, then you are asked again.${cut}\n\n${point.prompt.trim()}`;
  return { kind: 'edit_text', prompt: clip(text, QUESTION_BYTES), document: shown };
}

function choiceOption(choice: PointChoice): ChoiceOption {
  const description = describe(choice);
  return description === undefined ? { label: choice.label } : { label: choice.label, description };
}

function describe(choice: PointChoice): string | undefined {
  switch (choice.role) {
    case 'approve':
      return choice.isDefault === true ? 'Accept the output and move on' : undefined;
    case 'revise':
      return choice.isDefault === true ? 'Send the stage back to be reworked' : `Send the stage back: ${clip(choice.directive ?? '', HUMAN_TOOL_LIMITS.optionDescriptionBytes - 30)}`;
    case 'edit':
      return 'Edit the output yourself, then decide again';
    case 'abort':
      return 'Cancel the run';
  }
}

/** "Type "A", "B" or "C" to choose; anything else approves and is passed on as a note." or "" without options. */
function optionsHint(point: InteractionPoint): string {
  const labels = declaredChoices(point).map((choice) => `"${choice.label}"`);
  if (labels.length === 0) {
    return '';
  }
  const list = labels.length === 1 ? labels[0] : `${labels.slice(0, -1).join(', ')} or ${labels[labels.length - 1]}`;
  return `Type ${list} to choose; anything else approves and is passed on as a note.`;
}

/** The question and the hint below it, together within QUESTION_BYTES; the hint keeps at most half. */
function questionWithHint(question: string, hint: string): string {
  if (hint === '') {
    return clip(question.trim(), QUESTION_BYTES);
  }
  const boundedHint = clip(hint, HINT_BYTES);
  const separator = '\n\n';
  const room = QUESTION_BYTES - utf8ByteLength(boundedHint) - utf8ByteLength(separator);
  return `${clip(question.trim(), room)}${separator}${boundedHint}`;
}

function withDocument(question: string, document: string | null): string {
  if (document === null || document.trim() === '') {
    return question;
  }
  return `${question}\n\n${DOCUMENT_HEADING}\n${clip(document, DOCUMENT_BYTES)}`;
}

/** The text if it fits in maxBytes of UTF-8, else a prefix ending in "…" that does. */
export function clip(text: string, maxBytes: number): string {
  if (utf8ByteLength(text) <= maxBytes) {
    return text;
  }
  return `${truncateUtf8(text, Math.max(0, maxBytes - utf8ByteLength(ELLIPSIS)))}${ELLIPSIS}`;
}
