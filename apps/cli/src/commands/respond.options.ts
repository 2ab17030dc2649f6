import type { AnswerBody, Prompt } from '@parley/contracts';
import { UsageError } from '../cli.errors';
import { parseChoice } from '../prompt/answer.parsing';

/** The answer-related parts of `parley respond <id> [text] [flags]`. */
export interface AnswerFlags {
  text?: string;
  /** Raw --choice values: repeated flags and/or comma lists. */
  choice: string[];
  approve: boolean;
  deny: boolean;
  feedback?: string;
}

const FLAGS_BY_KIND: Record<Prompt['kind'], readonly string[]> = {
  free_text: ['<text>'],
  edit_text: ['<text>'],
  multiple_choice: ['--choice'],
  confirm: ['--approve', '--deny'],
  review: ['--approve', '--deny', '--feedback'],
};

export function hasAnswerFlags(flags: AnswerFlags): boolean {
  return givenFlags(flags).length > 0;
}

/** Maps flags onto the AnswerBody the interaction's kind expects; throws UsageError when they do not fit. */
export function answerFromFlags(prompt: Prompt, flags: AnswerFlags): AnswerBody {
  const allowed = FLAGS_BY_KIND[prompt.kind];
  const misplaced = givenFlags(flags).filter((flag) => !allowed.includes(flag));
  if (misplaced.length > 0) {
    throw new UsageError(`${misplaced.join(', ')} cannot answer a ${prompt.kind} interaction (use ${allowed.join(' / ')})`);
  }
  switch (prompt.kind) {
    case 'free_text':
    case 'edit_text':
      if (flags.text === undefined) {
        throw new UsageError(`a ${prompt.kind} interaction needs a text: parley respond <id> "<text>" (or "-" to read stdin)`);
      }
      return { text: flags.text };
    case 'multiple_choice': {
      if (flags.choice.length === 0) {
        throw new UsageError(`a multiple_choice interaction needs --choice N (0-${prompt.options.length - 1})`);
      }
      const parsed = parseChoice(flags.choice.join(','), prompt);
      if (!parsed.ok) {
        throw new UsageError(`--choice: ${parsed.error}`);
      }
      return parsed.value;
    }
    case 'confirm':
      return { confirmed: verdict(prompt.kind, flags) };
    case 'review': {
      const approved = verdict(prompt.kind, flags);
      return flags.feedback === undefined ? { approved } : { approved, feedback: flags.feedback };
    }
  }
}

function verdict(kind: Prompt['kind'], flags: AnswerFlags): boolean {
  if (flags.approve === flags.deny) {
    throw new UsageError(`a ${kind} interaction needs exactly one of --approve or --deny`);
  }
  return flags.approve;
}

function givenFlags(flags: AnswerFlags): string[] {
  const given: string[] = [];
  if (flags.text !== undefined) {
    given.push('<text>');
  }
  if (flags.choice.length > 0) {
    given.push('--choice');
  }
  if (flags.approve) {
    given.push('--approve');
  }
  if (flags.deny) {
    given.push('--deny');
  }
  if (flags.feedback !== undefined) {
    given.push('--feedback');
  }
  return given;
}
