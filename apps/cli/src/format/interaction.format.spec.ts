import type { Interaction } from '@parley/contracts';
import { formatActor, formatAnswer, formatInteractionBlock, formatOptionsInline, formatResolution, respondHint, summarizeInteraction } from './interaction.format';

const base: Interaction = {
  id: 'i1',
  tenant: 'dev',
  runId: 'r1',
  owner: 'cli',
  waitReason: 'question',
  prompt: { kind: 'multiple_choice', prompt: 'Colour?', options: [{ label: 'Red' }, { label: 'Blue', description: 'cool' }], multi: true },
  status: 'open',
  createdAt: '2030-01-01T00:00:00.000Z',
  deadline: null,
};

describe('interaction formatting', () => {
  it('summarizes for `respond --json`', () => {
    expect(summarizeInteraction(base)).toEqual({ id: 'i1', runId: 'r1', kind: 'multiple_choice', prompt: 'Colour?', options: ['Red', 'Blue'], deadline: null });
    expect(summarizeInteraction({ ...base, prompt: { kind: 'confirm', prompt: 'Ok?' } }).options).toEqual([]);
  });

  it('names actors and outcomes', () => {
    expect(formatActor({ kind: 'user', subject: 'ann' })).toBe('ann');
    expect(formatActor({ kind: 'deadline' })).toBe('the deadline');
    expect(formatResolution('answered', { kind: 'user', subject: 'ann' }, 'T')).toBe('answered by ann at T');
    expect(formatResolution('expired', { kind: 'deadline' }, 'T')).toBe('expired at T');
    expect(formatResolution('cancelled', { kind: 'system' }, 'T')).toBe('cancelled by the system at T');
  });

  it('formats recorded answers', () => {
    expect(formatAnswer({ kind: 'multiple_choice', choices: [1, 0], labels: ['Blue', 'Red'] })).toBe('1) Blue, 0) Red');
    expect(formatAnswer({ kind: 'confirm', confirmed: false })).toBe('no');
    expect(formatAnswer({ kind: 'review', approved: true, feedback: 'ok' })).toBe('approved: "ok"');
    expect(formatAnswer({ kind: 'free_text', text: 'a\nb' })).toBe('"a b"');
    expect(formatAnswer(undefined)).toBe('(no answer)');
  });

  it('lists options inline and hints how to respond', () => {
    expect(formatOptionsInline(base.prompt)).toBe('0) Red | 1) Blue (multi)');
    expect(respondHint(base)).toBe('parley respond i1 --choice N[,N...]');
    expect(respondHint({ ...base, prompt: { kind: 'review', prompt: 'r', markdown: 'm' } })).toBe('parley respond i1 --approve|--deny [--feedback "<text>"]');
  });

  it('renders the prompt block', () => {
    expect(formatInteractionBlock({ ...base, deadline: '2030-01-01T00:30:00.000Z' }, new Date('2030-01-01T00:00:00.000Z'))).toBe(
      ['', '? Colour?', '  (multiple_choice · interaction i1 · expires in 30m)', '  0) Red', '  1) Blue — cool', '  Pick one or more numbers, separated by commas.', ''].join('\n'),
    );
  });
});
