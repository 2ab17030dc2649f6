import type { Prompt } from '@parley/contracts';
import { UsageError } from '../cli.errors';
import { answerFromFlags, hasAnswerFlags, type AnswerFlags } from './respond.options';

const none: AnswerFlags = { choice: [], approve: false, deny: false };
const choice: Prompt = { kind: 'multiple_choice', prompt: 'p', options: [{ label: 'a' }, { label: 'b' }, { label: 'c' }], multi: false };
const multi: Prompt = { ...choice, multi: true };

describe('answerFromFlags', () => {
  it('uses the text for free_text and edit_text', () => {
    expect(answerFromFlags({ kind: 'free_text', prompt: 'p' }, { ...none, text: 'hi' })).toEqual({ text: 'hi' });
    expect(answerFromFlags({ kind: 'edit_text', prompt: 'p', document: 'd' }, { ...none, text: '' })).toEqual({ text: '' });
  });

  it('maps --choice to {choice} or, for multi, {choices} from repeats and comma lists', () => {
    expect(answerFromFlags(choice, { ...none, choice: ['2'] })).toEqual({ choice: 2 });
    expect(answerFromFlags(multi, { ...none, choice: ['0,2', '1'] })).toEqual({ choices: [0, 2, 1] });
    expect(answerFromFlags(multi, { ...none, choice: ['1'] })).toEqual({ choices: [1] });
  });

  it('maps --approve/--deny to confirmed, and to approved (+feedback) for review', () => {
    expect(answerFromFlags({ kind: 'confirm', prompt: 'p' }, { ...none, approve: true })).toEqual({ confirmed: true });
    expect(answerFromFlags({ kind: 'confirm', prompt: 'p' }, { ...none, deny: true })).toEqual({ confirmed: false });
    expect(answerFromFlags({ kind: 'review', prompt: 'p', markdown: 'm' }, { ...none, deny: true, feedback: 'redo' })).toEqual({
      approved: false,
      feedback: 'redo',
    });
    expect(answerFromFlags({ kind: 'review', prompt: 'p', markdown: 'm' }, { ...none, approve: true })).toEqual({ approved: true });
  });

  it.each<[string, Prompt, AnswerFlags, string]>([
    ['no text', { kind: 'free_text', prompt: 'p' }, none, 'a free_text interaction needs a text'],
    ['a choice for text', { kind: 'free_text', prompt: 'p' }, { ...none, text: 'x', choice: ['1'] }, '--choice cannot answer a free_text interaction (use <text>)'],
    ['no choice', choice, none, 'needs --choice N (0-2)'],
    ['two choices for single', choice, { ...none, choice: ['0,1'] }, '--choice: this question takes exactly one option'],
    ['out of range', choice, { ...none, choice: ['3'] }, '--choice: there is no option 3 (choose 0-2)'],
    ['not a number', choice, { ...none, choice: ['b'] }, '--choice: "b" is not an option number (0-2)'],
    ['no verdict', { kind: 'confirm', prompt: 'p' }, none, 'needs exactly one of --approve or --deny'],
    ['both verdicts', { kind: 'confirm', prompt: 'p' }, { ...none, approve: true, deny: true }, 'needs exactly one of --approve or --deny'],
    ['feedback on confirm', { kind: 'confirm', prompt: 'p' }, { ...none, approve: true, feedback: 'f' }, '--feedback cannot answer a confirm interaction'],
    ['text on review', { kind: 'review', prompt: 'p', markdown: 'm' }, { ...none, approve: true, text: 'x' }, '<text> cannot answer a review interaction'],
  ])('rejects %s as a usage error', (_name, prompt, flags, message) => {
    let thrown: unknown;
    try {
      answerFromFlags(prompt, flags);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(UsageError);
    expect((thrown as Error).message).toContain(message);
  });
});

describe('hasAnswerFlags', () => {
  it('is false only when nothing answer-related was given', () => {
    expect(hasAnswerFlags(none)).toBe(false);
    expect(hasAnswerFlags({ ...none, feedback: 'x' })).toBe(true);
    expect(hasAnswerFlags({ ...none, text: '' })).toBe(true);
  });
});
