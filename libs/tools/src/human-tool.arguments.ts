import type { Prompt } from '@parley/contracts';
import { checkInput, isRecord, trimAndBound } from './tool.input';
import { HUMAN_TOOL_LIMITS as LIMITS } from './tool.limits';
import type { HumanToolName } from './tool.names';
import {
  AskUserChoiceInputSchema,
  AskUserConfirmInputSchema,
  AskUserTextInputSchema,
  EditDocumentInputSchema,
  PresentForReviewInputSchema,
} from './tool.schemas';

export type PreparedHumanToolCall = { ok: true; prompt: Prompt } | { ok: false; error: string };

/**
 * Turns a model's call of a human tool into the prompt the person will see, exactly: strings
 * trimmed and bounded, empty options dropped, options past the limit dropped. The raw input is
 * spread under the normalised fields so that the strict schema refuses any field it does not know
 * (in an option too) instead of losing it. Never throws;
 * anything the model must fix comes back as `{ ok: false, error }` for its tool_result.
 */
export function prepareHumanToolCall(name: HumanToolName, rawInput: unknown): PreparedHumanToolCall {
  if (!isRecord(rawInput)) {
    return { ok: false, error: `invalid ${name} input: expected a JSON object` };
  }
  switch (name) {
    case 'ask_user_text': {
      const input = checkInput(name, AskUserTextInputSchema, { ...rawInput, question: trimAndBound(rawInput.question, LIMITS.questionBytes) });
      return input.ok ? { ok: true, prompt: { kind: 'free_text', prompt: input.value.question } } : input;
    }
    case 'ask_user_confirm': {
      const input = checkInput(name, AskUserConfirmInputSchema, { ...rawInput, question: trimAndBound(rawInput.question, LIMITS.questionBytes) });
      return input.ok ? { ok: true, prompt: { kind: 'confirm', prompt: input.value.question } } : input;
    }
    case 'ask_user_choice':
      return prepareChoice(rawInput);
    case 'edit_document': {
      const input = checkInput(name, EditDocumentInputSchema, {
        ...rawInput,
        instructions: trimAndBound(rawInput.instructions, LIMITS.questionBytes),
        content: trimAndBound(rawInput.content, LIMITS.documentBytes),
      });
      return input.ok ? { ok: true, prompt: { kind: 'edit_text', prompt: input.value.instructions, document: input.value.content } } : input;
    }
    case 'present_for_review': {
      const input = checkInput(name, PresentForReviewInputSchema, {
        ...rawInput,
        title: trimAndBound(rawInput.title, LIMITS.titleBytes),
        markdown: trimAndBound(rawInput.markdown, LIMITS.documentBytes),
      });
      return input.ok ? { ok: true, prompt: { kind: 'review', prompt: input.value.title, markdown: input.value.markdown } } : input;
    }
  }
}

function prepareChoice(rawInput: Record<string, unknown>): PreparedHumanToolCall {
  const options = normaliseOptions(rawInput.options);
  if (Array.isArray(options) && options.length < 2) {
    return {
      ok: false,
      error:
        `ask_user_choice needs at least 2 options (got ${options.length} after dropping empty ones); ` +
        'offer distinct choices, or use ask_user_confirm or ask_user_text instead',
    };
  }
  const input = checkInput('ask_user_choice', AskUserChoiceInputSchema, {
    ...rawInput,
    question: trimAndBound(rawInput.question, LIMITS.questionBytes),
    options,
    multi: rawInput.multi ?? undefined,
  });
  if (!input.ok) {
    return input;
  }
  const seen = new Set<string>();
  for (const { label } of input.value.options) {
    if (seen.has(label)) {
      return { ok: false, error: `ask_user_choice options must have distinct labels: "${label}" appears more than once` };
    }
    seen.add(label);
  }
  return { ok: true, prompt: { kind: 'multiple_choice', prompt: input.value.question, options: input.value.options, multi: input.value.multi } };
}

/** Drops empty options and those past the limit; a bare string is taken as a label. */
function normaliseOptions(value: unknown): unknown {
  if (value === undefined || value === null) {
    return [];
  }
  if (!Array.isArray(value)) {
    return value;
  }
  const kept: unknown[] = [];
  for (const item of value as unknown[]) {
    const option = normaliseOption(item);
    if (option !== undefined) {
      kept.push(option);
      if (kept.length === LIMITS.maxOptions) {
        break;
      }
    }
  }
  return kept;
}

/** undefined for an empty option (no label, or a blank one). */
function normaliseOption(item: unknown): unknown {
  const option = typeof item === 'string' ? { label: item } : item;
  if (!isRecord(option)) {
    return option === undefined || option === null ? undefined : option;
  }
  const { label: rawLabel, description: rawDescription, ...unknownFields } = option;
  const label = trimAndBound(rawLabel, LIMITS.optionLabelBytes);
  if (label === undefined || label === null || label === '') {
    return undefined;
  }
  const description = trimAndBound(rawDescription, LIMITS.optionDescriptionBytes);
  return description === undefined || description === null || description === '' ? { ...unknownFields, label } : { ...unknownFields, label, description };
}
