import type { Answer, AnswerBody, Interaction } from '@parley/contracts';
import { interactionFixture } from '../testing/interaction.fixture';
import { answeredWith } from './answer.match';

const resolved = (answer: Answer, subject = 'cli'): Interaction => interactionFixture({ status: 'answered', resolvedAt: 'T', resolvedBy: { kind: 'user', subject }, answer });

const approval = (extra: Partial<Extract<Answer, { kind: 'tool_approval' }>>): Answer => ({
  kind: 'tool_approval',
  decision: 'allow_once',
  input: { command: 'ls', timeout: 30 },
  edited: false,
  grants: [],
  argsDigest: 'd',
  ...extra,
});

describe('answeredWith', () => {
  it.each<[string, Answer, AnswerBody, AnswerBody]>([
    ['free text', { kind: 'free_text', text: 'hi' }, { text: 'hi' }, { text: 'hello' }],
    ['a choice', { kind: 'multiple_choice', choices: [1], labels: ['B'] }, { choice: 1 }, { choice: 0 }],
    ['several choices', { kind: 'multiple_choice', choices: [2, 0], labels: ['C', 'A'] }, { choices: [2, 0] }, { choices: [0, 2] }],
    ['a confirm', { kind: 'confirm', confirmed: false }, { confirmed: false }, { confirmed: true }],
    ['a review with feedback', { kind: 'review', approved: true, feedback: 'ok' }, { approved: true, feedback: 'ok' }, { approved: true }],
    ['an approval', approval({}), { decision: 'allow_once' }, { decision: 'allow_run' }],
    ['unedited arguments', approval({}), { decision: 'allow_once' }, { decision: 'allow_once', input: { command: 'rm' } }],
    ['edited arguments (defaults filled in)', approval({ edited: true }), { decision: 'allow_once', input: { command: 'ls' } }, { decision: 'allow_once' }],
    ['a denial with a reason (trimmed)', approval({ decision: 'deny', reason: 'no' }), { decision: 'deny', reason: ' no ' }, { decision: 'deny' }],
  ])('recognises our own recorded answer, and only that one: %s', (_what, answer, ours, other) => {
    expect(answeredWith(resolved(answer), ours, 'cli')).toBe(true);
    expect(answeredWith(resolved(answer), other, 'cli')).toBe(false);
    expect(answeredWith(resolved(answer, 'alice'), ours, 'cli')).toBe(false);
    expect(answeredWith({ ...resolved(answer), status: 'expired' }, ours, 'cli')).toBe(false);
  });
});
