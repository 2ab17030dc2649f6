import { InteractionPointSchema, type Answer, type InteractionPoint, type Outcome } from '@parley/contracts';
import { interpretDecision, type CheckpointAction } from './checkpoint.answer';

const point = (fields: Partial<Record<keyof InteractionPoint, unknown>> = {}): InteractionPoint =>
  InteractionPointSchema.parse({
    name: 'plan',
    prompt: 'Is the plan good?',
    options: ['Approve', 'Auto approve'],
    directives: { 'More detail': 'Add more detail.', Shorter: 'Make it shorter.' },
    edit_options: ['Let me edit'],
    abort_options: ['Cancel run'],
    ...fields,
  });

const picked = (label: string): Answer => ({ kind: 'multiple_choice', choices: [0], labels: [label] });
const typed = (text: string): Answer => ({ kind: 'free_text', text });
const confirmed = (value: boolean): Answer => ({ kind: 'confirm', confirmed: value });

describe('interpretDecision: multiple_choice', () => {
  const p = point();
  it.each<[string, CheckpointAction]>([
    ['Approve', { kind: 'approve', note: 'plan: Approve' }],
    ['Auto approve', { kind: 'approve', note: 'plan: Auto approve' }],
    ['More detail', { kind: 'revise', directive: 'Add more detail.', option: 'More detail' }],
    ['Shorter', { kind: 'revise', directive: 'Make it shorter.', option: 'Shorter' }],
    ['Let me edit', { kind: 'edit', option: 'Let me edit' }],
    ['Cancel run', { kind: 'abort', option: 'Cancel run' }],
    ['cancel-run', { kind: 'abort', option: 'Cancel run' }],
  ])('%j → %j', (label, expected) => {
    expect(interpretDecision(p, 'answered', picked(label), false)).toEqual(expected);
  });

  it('fails on a label the menu no longer has (the agent changed while the checkpoint waited): never approves on a guess', () => {
    expect(interpretDecision(p, 'answered', picked('Abandon ship'), false)).toEqual({
      kind: 'fail',
      error: 'checkpoint "plan" was answered "Abandon ship", which the agent\'s checkpoint no longer offers (its definition changed while the checkpoint waited)',
    });
  });

  it('reads the default choices of a point that declared too few', () => {
    const bare = point({ options: [], directives: {}, edit_options: [], abort_options: [] });
    expect(interpretDecision(bare, 'answered', picked('Approve'), false)).toEqual({ kind: 'approve', note: 'plan: Approve' });
    expect(interpretDecision(bare, 'answered', picked('Revise'), false)).toEqual({
      kind: 'revise',
      directive: 'The person chose "Revise" at the checkpoint: Is the plan good? Revise your work and try again.',
      option: 'Revise',
    });
  });

  it('gives an exact label the role it was declared with, even when another normalises the same', () => {
    const p2 = point({ options: ['stop-now'], directives: {}, edit_options: [], abort_options: ['Stop now'] });
    expect(interpretDecision(p2, 'answered', picked('stop-now'), false)).toEqual({ kind: 'approve', note: 'plan: stop-now' });
    expect(interpretDecision(p2, 'answered', picked('Stop now'), false)).toEqual({ kind: 'abort', option: 'Stop now' });
  });

  it('fails on a pick without a label', () => {
    expect(interpretDecision(p, 'answered', { kind: 'multiple_choice', choices: [], labels: [] }, false)).toMatchObject({ kind: 'fail' });
  });
});

describe('interpretDecision: free_text', () => {
  const p = point({ style: 'free_text' });
  it.each<[string, CheckpointAction]>([
    ['Approve', { kind: 'approve', note: 'plan: Approve' }],
    ['auto-approve', { kind: 'approve', note: 'plan: Auto approve' }],
    ['AUTO_APPROVE', { kind: 'approve', note: 'plan: Auto approve' }],
    ['more detail', { kind: 'revise', directive: 'Add more detail.', option: 'More detail' }],
    [' SHORTER ', { kind: 'revise', directive: 'Make it shorter.', option: 'Shorter' }],
    ['let-me-edit', { kind: 'edit', option: 'Let me edit' }],
    ['cancel_run', { kind: 'abort', option: 'Cancel run' }],
    ['  Looks fine, but watch the budget.  ', { kind: 'approve', note: 'Looks fine, but watch the budget.' }],
    ['Revise', { kind: 'approve', note: 'Revise' }], // the menu defaults are not options of a free_text point
    ['   ', { kind: 'approve', note: null }],
  ])('%j → %j', (text, expected) => {
    expect(interpretDecision(p, 'answered', typed(text), false)).toEqual(expected);
  });

  it('approves any text at a point without options', () => {
    const bare = point({ style: 'free_text', options: [], directives: {}, edit_options: [], abort_options: [] });
    expect(interpretDecision(bare, 'answered', typed('Go ahead'), false)).toEqual({ kind: 'approve', note: 'Go ahead' });
  });
});

describe('interpretDecision: confirm', () => {
  const p = point({ style: 'confirm' });
  it('approves a yes without a note', () => {
    expect(interpretDecision(p, 'answered', confirmed(true), false)).toEqual({ kind: 'approve', note: null });
  });

  it('revises a no with the default directive', () => {
    expect(interpretDecision(p, 'answered', confirmed(false), false)).toEqual({
      kind: 'revise',
      directive: 'The person did not confirm: Is the plan good? Revise your work and try again.',
      option: 'No',
    });
    expect(interpretDecision(point({ style: 'confirm', prompt: 'Ship the release' }), 'answered', confirmed(false), false)).toMatchObject({
      directive: 'The person did not confirm: Ship the release. Revise your work and try again.',
    });
  });
});

describe('interpretDecision: outcomes', () => {
  const attended = point({ unattended: 'ask' });
  const autoApprove = point({ unattended: 'auto_approve' });

  it.each<[string, CheckpointAction['kind'], InteractionPoint, Outcome, boolean]>([
    ['expired, attended', 'proceed', attended, 'expired', false],
    ['expired, unattended, auto_approve', 'proceed', autoApprove, 'expired', true],
    ['expired, unattended, ask', 'fail', attended, 'expired', true],
    ['cancelled', 'abort', attended, 'cancelled', false],
    ['cancelled, unattended', 'abort', attended, 'cancelled', true],
  ])('%s → %s', (_case, kind, p, outcome, unattended) => {
    expect(interpretDecision(p, outcome, undefined, unattended).kind).toBe(kind);
  });

  it('proceeds on a deadline with no note', () => {
    expect(interpretDecision(attended, 'expired', undefined, false)).toEqual({ kind: 'proceed', why: 'deadline' });
  });

  it('fails an unattended run whose asking checkpoint expired, saying so', () => {
    const action = interpretDecision(attended, 'expired', undefined, true);
    expect(action).toEqual({ kind: 'fail', error: expect.stringContaining('checkpoint "plan" expired') });
  });

  it('aborts with no option when the run was stopped', () => {
    expect(interpretDecision(attended, 'cancelled', picked('Approve'), false)).toEqual({ kind: 'abort', option: null });
  });

  it.each<[string, Answer | undefined]>([
    ['no answer', undefined],
    ['an edit', { kind: 'edit_text', text: 'x' }],
    ['a review', { kind: 'review', approved: true }],
  ])('fails on an answered decision with %s', (_case, answer) => {
    expect(interpretDecision(attended, 'answered', answer, false)).toMatchObject({ kind: 'fail', error: expect.stringContaining('"plan"') });
  });
});
