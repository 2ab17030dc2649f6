import type { AnswerBody, Prompt } from '@parley/contracts';
import { errorMessage } from '../errors.describe';

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

/** The edited arguments of a tool call: a JSON object (the gateway checks it against the tool's schema). */
export function parseJsonObject(input: string): Parsed<Record<string, unknown>> {
  let value: unknown;
  try {
    value = JSON.parse(input);
  } catch (error) {
    return fail(`not valid JSON (${errorMessage(error)})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return fail('must be a JSON object holding the tool\'s arguments, e.g. {"command": "ls"}');
  }
  return ok(value as Record<string, unknown>);
}

/** What the approver picks at the `o/s/r/e/d` prompt. */
export type ApprovalChoice = 'once' | 'stage' | 'run' | 'edit' | 'deny';

const APPROVAL_CHOICES: Record<string, ApprovalChoice> = {
  o: 'once',
  once: 'once',
  s: 'stage',
  stage: 'stage',
  r: 'run',
  run: 'run',
  e: 'edit',
  edit: 'edit',
  d: 'deny',
  deny: 'deny',
};

/** `reusable` is false when the call offers no grant beyond this one call: then only o, e and d make sense. */
export function parseApprovalChoice(input: string, reusable: boolean): Parsed<ApprovalChoice> {
  const choice = APPROVAL_CHOICES[input.trim().toLowerCase()] as ApprovalChoice | undefined;
  const menu = reusable ? 'o (once), s (this stage), r (this run), e (edit) or d (deny)' : 'o (once), e (edit) or d (deny)';
  if (choice === undefined) {
    return fail(`answer ${menu}`);
  }
  if (!reusable && (choice === 'stage' || choice === 'run')) {
    return fail(`this call offers no reusable grant; answer ${menu}`);
  }
  return ok(choice);
}

/** After an edit: how long the approval of the edited call lasts. */
export function parseApprovalScope(input: string): Parsed<'once' | 'stage' | 'run'> {
  const choice = APPROVAL_CHOICES[input.trim().toLowerCase()] as ApprovalChoice | undefined;
  return choice === 'once' || choice === 'stage' || choice === 'run' ? ok(choice) : fail('answer o (once), s (this stage) or r (this run)');
}

export type JsonStep = { done: false; error?: string } | { done: true; value: Record<string, unknown> | undefined };

/**
 * Collects edited arguments typed or pasted as JSON, on one line or over several: input is read
 * until it parses. An empty first line keeps the arguments as they are (value undefined); a syntax
 * error that more lines cannot fix is reported and the collection starts over.
 */
export class JsonArgumentsCollector {
  private text = '';

  feed(line: string): JsonStep {
    if (this.text === '' && line.trim() === '') {
      return { done: true, value: undefined };
    }
    this.text = this.text === '' ? line : `${this.text}\n${line}`;
    const parsed = parseJsonObject(this.text);
    if (parsed.ok) {
      return { done: true, value: parsed.value };
    }
    if (isIncompleteJson(this.text)) {
      return { done: false };
    }
    this.text = '';
    return { done: false, error: parsed.error };
  }

  /** True while a multi-line value is being collected. */
  get pending(): boolean {
    return this.text !== '';
  }
}

/** The text could still become valid JSON: the parser ran out of input rather than meeting a wrong character. */
function isIncompleteJson(text: string): boolean {
  try {
    JSON.parse(text);
    return false;
  } catch (error) {
    const message = errorMessage(error);
    if (/end of JSON input/i.test(message)) {
      return true;
    }
    // A string cannot go on over a line break, so an unterminated one is an error.
    const position = /at position (\d+)/.exec(message);
    return position !== null && !/unterminated string/i.test(message) && Number(position[1]) >= text.trimEnd().length;
  }
}
