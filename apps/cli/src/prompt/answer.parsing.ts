import type { AnswerBody, Prompt } from '@parley/contracts';

/** Pure input parsing shared by the terminal prompter and `parley respond` flags. */
export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

type ChoicePrompt = Extract<Prompt, { kind: 'multiple_choice' }>;

const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });
const fail = <T>(error: string): Parsed<T> => ({ ok: false, error });

export function parseFreeText(input: string): Parsed<AnswerBody> {
  const text = input.trim();
  return text === '' ? fail('the answer cannot be empty; type something and press Enter') : ok({ text });
}

/**
 * Option numbers are 0-based, as in the API and as every listing shows them. Accepts "2", "0,2",
 * "0 2"; a single-choice prompt yields `{choice}`, a multi-choice one `{choices}`.
 */
export function parseChoice(input: string, prompt: ChoicePrompt): Parsed<AnswerBody> {
  const tokens = input.split(/[\s,]+/).filter((token) => token !== '');
  const last = prompt.options.length - 1;
  if (tokens.length === 0) {
    return fail(prompt.multi ? `type one or more option numbers (0-${last}), e.g. 0,2` : `type the number of an option (0-${last})`);
  }
  const picked: number[] = [];
  for (const token of tokens) {
    if (!/^\d+$/.test(token)) {
      return fail(`"${token}" is not an option number (0-${last})`);
    }
    const index = Number(token);
    if (index > last) {
      return fail(`there is no option ${index} (choose 0-${last})`);
    }
    if (picked.includes(index)) {
      return fail(`option ${index} is picked twice`);
    }
    picked.push(index);
  }
  if (!prompt.multi && picked.length > 1) {
    return fail('this question takes exactly one option');
  }
  return ok(prompt.multi ? { choices: picked } : { choice: picked[0] });
}

export function parseYesNo(input: string): Parsed<boolean> {
  switch (input.trim().toLowerCase()) {
    case 'y':
    case 'yes':
      return ok(true);
    case 'n':
    case 'no':
      return ok(false);
    default:
      return fail('answer y or n');
  }
}

/** Optional feedback: an empty line means none. */
export function parseFeedback(input: string): string | undefined {
  const text = input.trim();
  return text === '' ? undefined : text;
}

export type EditStep = { done: false } | { done: true; text: string };

/**
 * Collects a replacement document line by line. A line holding only "." ends it; an empty first
 * line keeps the original document; a "." as the very first line sends an empty document.
 */
export class EditTextCollector {
  private readonly lines: string[] = [];

  constructor(private readonly original: string) {}

  feed(line: string): EditStep {
    if (line.trimEnd() === '.') {
      return { done: true, text: this.lines.join('\n') };
    }
    if (this.lines.length === 0 && line === '') {
      return { done: true, text: this.original };
    }
    this.lines.push(line);
    return { done: false };
  }
}
