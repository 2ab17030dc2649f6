import type { Prompt } from '@parley/contracts';
import { UsageError } from '../cli.errors';
import { shellApprovalPrompt } from '../testing/interaction.fixture';
import { answerFromFlags, hasAnswerFlags, type AnswerFlags } from './respond.options';

const none: AnswerFlags = { choice: [], approve: false, deny: false };
const choice: Prompt = { kind: 'multiple_choice', prompt: 'p', options: [{ label: 'a' }, { label: 'b' }, { label: 'c' }], multi: false };
const multi: Prompt = { ...choice, multi: true };
const shell: Prompt = shellApprovalPrompt('ls && git status', { reusable: true, keys: ['shell:cmd:ls', 'shell:cmd:git status'], description: '`ls` and `git status` (any arguments)' });
const risky: Prompt = { ...shell, grant: { reusable: false, reason: 'This command offers no reusable grant: it uses command substitution ($(...)).' } };
const write: Prompt = {
  kind: 'tool_approval',
  prompt: 'write_file notes/a.md',
  tool: 'write_file',
  input: { path: 'notes/a.md', content: 'x' },
  telling: { label: 'path', value: 'notes/a.md' },
  stage: 'build',
  grant: { reusable: true, keys: ['write_file:path:notes/a.md'], description: 'write_file on notes/a.md', directories: ['', 'notes/'] },
};

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

  it.each<[string, AnswerFlags, unknown]>([
    ['--approve', { ...none, approve: true }, { decision: 'allow_once' }],
    ['--approve --stage', { ...none, approve: true, stage: true }, { decision: 'allow_stage' }],
    ['--approve --run', { ...none, approve: true, run: true }, { decision: 'allow_run' }],
    ['--edit', { ...none, edit: '{"command":"ls"}' }, { decision: 'allow_once', input: { command: 'ls' } }],
    ['--edit --run', { ...none, edit: ' { "command": "git status" } ', run: true }, { decision: 'allow_run', input: { command: 'git status' } }],
    ['--approve --edit --stage', { ...none, approve: true, edit: '{"command":"ls"}', stage: true }, { decision: 'allow_stage', input: { command: 'ls' } }],
    ['--deny', { ...none, deny: true }, { decision: 'deny' }],
    ['--deny --reason', { ...none, deny: true, reason: 'not on main' }, { decision: 'deny', reason: 'not on main' }],
  ])('maps %s for a tool_approval', (_name, flags, body) => {
    expect(answerFromFlags(shell, flags)).toEqual(body);
  });

  it('maps --dir of a file tool to the folder the gateway expects', () => {
    expect(answerFromFlags(write, { ...none, approve: true, run: true, dir: 'notes' })).toEqual({ decision: 'allow_run', directory: 'notes/' });
    expect(answerFromFlags(write, { ...none, approve: true, stage: true, dir: './notes/' })).toEqual({ decision: 'allow_stage', directory: 'notes/' });
    expect(answerFromFlags(write, { ...none, approve: true, run: true, dir: '' })).toEqual({ decision: 'allow_run', directory: '' });
    expect(answerFromFlags(write, { ...none, approve: true, run: true, dir: '.' })).toEqual({ decision: 'allow_run', directory: '' });
  });

  it('allows a call that offers no reusable grant once', () => {
    expect(answerFromFlags(risky, { ...none, approve: true })).toEqual({ decision: 'allow_once' });
  });

  it.each<[string, Prompt, AnswerFlags, string]>([
    ['no decision', shell, none, "needs --approve (allow once; add --stage or --run for longer), --edit '<json>' or --deny"],
    ['scope alone', shell, { ...none, run: true }, "needs --approve (allow once; add --stage or --run for longer), --edit '<json>' or --deny"],
    ['deny and edit', shell, { ...none, deny: true, edit: '{}' }, '--deny cannot be combined with --approve or --edit'],
    ['deny with a scope', shell, { ...none, deny: true, run: true, dir: 'x' }, '--run, --dir only go with --approve or --edit, not with --deny'],
    ['a reason with approve', shell, { ...none, approve: true, reason: 'r' }, '--reason only goes with --deny'],
    ['stage and run', shell, { ...none, approve: true, stage: true, run: true }, '--stage and --run cannot be combined'],
    ['a scope without a reusable grant', risky, { ...none, approve: true, run: true }, '--run: This command offers no reusable grant: it uses command substitution ($(...)). Approve it once'],
    ['invalid --edit JSON', shell, { ...none, edit: '{command: ls}' }, '--edit: not valid JSON ('],
    ['--edit that is not an object', shell, { ...none, edit: '["ls"]' }, '--edit: must be a JSON object'],
    ['--dir without a scope', write, { ...none, approve: true, dir: 'notes' }, '--dir needs --stage or --run'],
    ['--dir of a shell call', shell, { ...none, approve: true, run: true, dir: 'notes' }, '--dir: shell grants are not kept per folder'],
    ['--dir that does not hold the file', write, { ...none, approve: true, run: true, dir: 'other' }, '--dir: "other" does not hold notes/a.md; choose one of "" (whole workspace), notes/'],
    ['--feedback on an approval', shell, { ...none, approve: true, feedback: 'f' }, '--feedback cannot answer a tool_approval interaction (use --approve / --deny / --edit / --stage / --run / --dir / --reason)'],
    ['--stage on a confirm', { kind: 'confirm', prompt: 'p' }, { ...none, approve: true, stage: true }, '--stage cannot answer a confirm interaction (use --approve / --deny)'],
    ['--edit on a review', { kind: 'review', prompt: 'p', markdown: 'm' }, { ...none, edit: '{}' }, '--edit cannot answer a review interaction'],
  ])('rejects %s for approvals as a usage error', (_name, prompt, flags, message) => {
    let thrown: unknown;
    try {
      answerFromFlags(prompt, flags);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(UsageError);
    expect((thrown as Error).message).toContain(message);
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
    expect(hasAnswerFlags({ ...none, stage: false, run: false })).toBe(false);
    expect(hasAnswerFlags({ ...none, run: true })).toBe(true);
    expect(hasAnswerFlags({ ...none, reason: 'x' })).toBe(true);
  });
});
