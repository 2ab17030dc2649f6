import type { Prompt } from '@parley/contracts';
import { ResolutionMismatchError, budgetExhaustedResult, renderResolution, skippedForQuestionResult } from './human-tool.result';

const single: Prompt = { kind: 'multiple_choice', prompt: 'Pick', options: [{ label: 'A' }, { label: 'B' }, { label: 'C' }], multi: false };
const multi: Prompt = { ...single, multi: true };
const parsed = (content: string): unknown => JSON.parse(content);

describe('renderResolution', () => {
  it('gives the text of a free_text or edit_text answer', () => {
    expect(renderResolution({ kind: 'free_text', prompt: 'City?' }, 'answered', { kind: 'free_text', text: 'Paris "centre"' })).toEqual({
      content: '{"ok":true,"answer":"Paris \\"centre\\""}',
      isError: false,
    });
    const edited = renderResolution({ kind: 'edit_text', prompt: 'Fix', document: 'Helo' }, 'answered', { kind: 'edit_text', text: 'Hello\n' });
    expect(parsed(edited.content)).toEqual({ ok: true, answer: 'Hello\n' });
  });

  it('gives the label for a single choice and the labels for a multi choice', () => {
    expect(renderResolution(single, 'answered', { kind: 'multiple_choice', choices: [1], labels: ['B'] }).content).toBe('{"ok":true,"answer":"B"}');
    expect(renderResolution(multi, 'answered', { kind: 'multiple_choice', choices: [2, 0], labels: ['C', 'A'] }).content).toBe(
      '{"ok":true,"answer":["C","A"]}',
    );
    expect(renderResolution(multi, 'answered', { kind: 'multiple_choice', choices: [0], labels: ['A'] }).content).toBe('{"ok":true,"answer":["A"]}');
  });

  it('gives a boolean for confirm', () => {
    const confirm: Prompt = { kind: 'confirm', prompt: 'Deploy?' };
    expect(renderResolution(confirm, 'answered', { kind: 'confirm', confirmed: false })).toEqual({ content: '{"ok":true,"answer":false}', isError: false });
    expect(renderResolution(confirm, 'answered', { kind: 'confirm', confirmed: true }).content).toBe('{"ok":true,"answer":true}');
  });

  it('gives approved and feedback (null when none) for review', () => {
    const review: Prompt = { kind: 'review', prompt: 'Plan', markdown: '# Plan' };
    expect(renderResolution(review, 'answered', { kind: 'review', approved: true }).content).toBe(
      '{"ok":true,"answer":{"approved":true,"feedback":null}}',
    );
    expect(renderResolution(review, 'answered', { kind: 'review', approved: false, feedback: '  ' }).content).toBe(
      '{"ok":true,"answer":{"approved":false,"feedback":null}}',
    );
    expect(parsed(renderResolution(review, 'answered', { kind: 'review', approved: false, feedback: 'Too long' }).content)).toEqual({
      ok: true,
      answer: { approved: false, feedback: 'Too long' },
    });
  });

  it('tells the model to carry on when the question expired', () => {
    expect(renderResolution(single, 'expired')).toEqual({
      content: '{"ok":false,"error":"no answer: the person did not answer before the deadline; continue with what you have"}',
      isError: false,
    });
  });

  it('says a cancelled question was withdrawn', () => {
    expect(renderResolution(single, 'cancelled')).toEqual({ content: '{"ok":false,"error":"cancelled: the question was withdrawn"}', isError: false });
  });

  it('refuses an answered outcome without an answer, or with an answer of another kind', () => {
    expect(() => renderResolution(single, 'answered')).toThrow(ResolutionMismatchError);
    expect(() => renderResolution(single, 'answered', { kind: 'confirm', confirmed: true })).toThrow(ResolutionMismatchError);
    expect(() => renderResolution(single, 'answered', { kind: 'multiple_choice', choices: [0, 1], labels: ['A', 'B'] })).toThrow(
      ResolutionMismatchError,
    );
  });
});

describe('fixed results', () => {
  it('budgetExhaustedResult names the budget and the way on', () => {
    const result = budgetExhaustedResult(3);
    expect(result.isError).toBe(true);
    expect(parsed(result.content)).toEqual({
      ok: false,
      error: 'question budget used up: you have asked the user 3 questions, the most allowed in this loop; continue with what you have, or call finish',
    });
    expect(parsed(budgetExhaustedResult(1).content)).toMatchObject({ error: expect.stringContaining('asked the user 1 question,') });
  });

  it('budgetExhaustedResult(0) says the agent may not ask at all', () => {
    const result = budgetExhaustedResult(0);
    expect(result.isError).toBe(true);
    expect(parsed(result.content)).toEqual({
      ok: false,
      error: 'not allowed: this agent may not ask the user questions; continue with what you have, or call finish',
    });
  });

  it('skippedForQuestionResult', () => {
    expect(skippedForQuestionResult()).toEqual({
      content: '{"ok":false,"error":"skipped: a question to the user took precedence; call this tool again after the answer if still needed"}',
      isError: true,
    });
  });
});
