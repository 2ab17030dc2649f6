import { PassThrough } from 'node:stream';
import type { Interaction, Prompt } from '@parley/contracts';
import { CapturedOutput } from '../testing/cli.harness';
import { shellApprovalPrompt } from '../testing/interaction.fixture';
import { InteractionPrompter } from './interaction.prompter';
import { EndOfInputError, LineReader, PromptCancelledError, type LineSource } from './line.reader';

class ScriptedLines implements LineSource {
  readonly prompts: string[] = [];
  constructor(private readonly lines: string[]) {}
  read(prompt: string, signal?: AbortSignal): Promise<string> {
    this.prompts.push(prompt);
    if (signal?.aborted) {
      return Promise.reject(new PromptCancelledError());
    }
    const line = this.lines.shift();
    return line === undefined ? Promise.reject(new Error('script exhausted')) : Promise.resolve(line);
  }
  discardTypeAhead(): number {
    return 0;
  }
}

const interaction = (prompt: Prompt): Interaction => ({
  id: 'i-1',
  tenant: 'dev',
  runId: 'r-1',
  owner: 'cli',
  agent: 'echo',
  waitReason: 'question',
  prompt,
  status: 'open',
  createdAt: '2030-01-01T00:00:00.000Z',
  deadline: '2030-01-01T00:10:00.000Z',
});

function setup(lines: string[]) {
  const source = new ScriptedLines(lines);
  let written = '';
  const prompter = new InteractionPrompter(source, (text) => (written += text), () => new Date('2030-01-01T00:00:00.000Z'));
  return { source, prompter, written: () => written };
}

const signal = new AbortController().signal;

const shell: Prompt = shellApprovalPrompt('ls && git status', { reusable: true, keys: ['shell:cmd:ls', 'shell:cmd:git status'], description: '`ls` and `git status` (any arguments)' });
const risky: Prompt = {
  ...shell,
  prompt: 'Run shell command: rm -rf $(pwd)',
  input: { command: 'rm -rf $(pwd)' },
  telling: { label: 'command', value: 'rm -rf $(pwd)' },
  grant: { reusable: false, reason: 'This command offers no reusable grant: it uses command substitution ($(...)).' },
};

describe('InteractionPrompter', () => {
  it('asks free text, re-asking on empty input', async () => {
    const { prompter, written, source } = setup(['', 'Ada']);
    await expect(prompter.ask(interaction({ kind: 'free_text', prompt: 'Name?' }), signal)).resolves.toEqual({ text: 'Ada' });
    expect(written()).toContain('? Name?\n  (free_text · interaction i-1 · expires in 10m)');
    expect(written()).toContain('cannot be empty');
    expect(source.prompts).toEqual(['> ', '> ']);
  });

  it('numbers options from 0 and re-asks until the input is valid', async () => {
    const { prompter, written } = setup(['9', '0,1', '1']);
    const prompt: Prompt = { kind: 'multiple_choice', prompt: 'Which?', options: [{ label: 'A', description: 'first' }, { label: 'B' }], multi: false };
    await expect(prompter.ask(interaction(prompt), signal)).resolves.toEqual({ choice: 1 });
    expect(written()).toContain('  0) A — first\n  1) B\n  Pick one number.');
    expect(written()).toContain('there is no option 9');
    expect(written()).toContain('exactly one option');
  });

  it('sends {choices} for a multi-select', async () => {
    const { prompter } = setup(['1,0']);
    const prompt: Prompt = { kind: 'multiple_choice', prompt: 'Which?', options: [{ label: 'A' }, { label: 'B' }], multi: true };
    await expect(prompter.ask(interaction(prompt), signal)).resolves.toEqual({ choices: [1, 0] });
  });

  it('asks y/n for confirm', async () => {
    const { prompter } = setup(['maybe', 'n']);
    await expect(prompter.ask(interaction({ kind: 'confirm', prompt: 'Sure?' }), signal)).resolves.toEqual({ confirmed: false });
  });

  it('shows the document and collects a replacement for edit_text', async () => {
    const { prompter, written } = setup(['new', 'text', '.']);
    await expect(prompter.ask(interaction({ kind: 'edit_text', prompt: 'Edit', document: 'the doc' }), signal)).resolves.toEqual({ text: 'new\ntext' });
    expect(written()).toContain('the doc');
    expect(written()).toContain('a line with a single "."');
  });

  it('asks a verdict and optional feedback for review', async () => {
    const { prompter, written } = setup(['y', '']);
    await expect(prompter.ask(interaction({ kind: 'review', prompt: 'Title', markdown: '**body**' }), signal)).resolves.toEqual({ approved: true });
    expect(written()).toContain('? Title');
    expect(written()).toContain('**body**');
    const withFeedback = setup(['n', 'too long']);
    await expect(withFeedback.prompter.ask(interaction({ kind: 'review', prompt: 'T', markdown: 'm' }), signal)).resolves.toEqual({
      approved: false,
      feedback: 'too long',
    });
  });

  it('shows the call, its arguments and what each choice grants, and allows it once', async () => {
    const { prompter, written, source } = setup(['yes', 'o']);
    await expect(prompter.ask({ ...interaction(shell), waitReason: 'approval' }, signal)).resolves.toEqual({ decision: 'allow_once' });
    expect(written()).toContain(
      [
        '? Run shell command: ls && git status',
        '  (tool_approval · interaction i-1 · expires in 10m)',
        '  Tool: shell',
        '  Command: ls && git status',
        '  Arguments:',
        '    {',
        '      "command": "ls && git status"',
        '    }',
        '  For this stage (build): allows `ls` and `git status` (any arguments) while the run is in this stage.',
        '  For this run: allows `ls` and `git status` (any arguments) for the rest of the run.',
        '  o) allow once   s) allow for this stage   r) allow for this run   e) edit arguments   d) deny',
      ].join('\n'),
    );
    expect(written()).toContain('  answer o (once), s (this stage), r (this run), e (edit) or d (deny)\n');
    expect(source.prompts).toEqual(['o/s/r/e/d> ', 'o/s/r/e/d> ']);
  });

  it('allows for the stage or for the run', async () => {
    await expect(setup(['s']).prompter.ask(interaction(shell), signal)).resolves.toEqual({ decision: 'allow_stage' });
    await expect(setup(['r']).prompter.ask(interaction(shell), signal)).resolves.toEqual({ decision: 'allow_run' });
  });

  it('edits the arguments as JSON, over several lines, then asks how long the approval lasts', async () => {
    const { prompter, written, source } = setup(['e', '{"command": }', '{', '  "command": "git status"', '}', 'x', 'r']);
    await expect(prompter.ask(interaction(shell), signal)).resolves.toEqual({ decision: 'allow_run', input: { command: 'git status' } });
    expect(written()).toContain('Type the arguments as JSON');
    expect(written()).toContain('  not valid JSON (');
    expect(written()).toContain('  answer o (once), s (this stage) or r (this run)\n');
    expect(source.prompts).toEqual(['o/s/r/e/d> ', 'json> ', 'json> ', '...> ', '...> ', 'o/s/r> ', 'o/s/r> ']);
  });

  it('keeps the arguments when the edit is left empty', async () => {
    await expect(setup(['e', '', 'o']).prompter.ask(interaction(shell), signal)).resolves.toEqual({ decision: 'allow_once' });
  });

  it('denies with an optional reason for the model', async () => {
    await expect(setup(['d', ' not on main ']).prompter.ask(interaction(shell), signal)).resolves.toEqual({ decision: 'deny', reason: 'not on main' });
    const { prompter, source } = setup(['d', '']);
    await expect(prompter.ask(interaction(shell), signal)).resolves.toEqual({ decision: 'deny' });
    expect(source.prompts).toEqual(['o/s/r/e/d> ', 'reason for the model (optional)> ']);
  });

  it('offers no stage or run grant when the call cannot have one, and says why', async () => {
    const { prompter, written, source } = setup(['r', 'o']);
    await expect(prompter.ask(interaction(risky), signal)).resolves.toEqual({ decision: 'allow_once' });
    expect(written()).toContain('  No reusable grant: This command offers no reusable grant: it uses command substitution ($(...)).\n  o) allow once   e) edit arguments   d) deny');
    expect(written()).not.toContain('For this run');
    expect(written()).toContain('this call offers no reusable grant; answer o (once), e (edit) or d (deny)');
    expect(source.prompts).toEqual(['o/e/d> ', 'o/e/d> ']);
  });

  it('shows only the problem when re-asking after a rejected answer', async () => {
    const { prompter, written } = setup(['x']);
    await prompter.ask(interaction({ kind: 'free_text', prompt: 'Name?' }), signal, 'invalid answer: text: too long');
    expect(written()).toBe('  ! invalid answer: text: too long — please answer again.\n');
  });

  it('stops when the signal is aborted', async () => {
    const { prompter } = setup(['x']);
    const controller = new AbortController();
    controller.abort();
    await expect(prompter.ask(interaction({ kind: 'free_text', prompt: 'Name?' }), controller.signal)).rejects.toBeInstanceOf(PromptCancelledError);
  });
});

describe('InteractionPrompter over stdin', () => {
  const settle = () => new Promise((resolve) => setImmediate(resolve));

  function overStdin(options: { tty: boolean }) {
    const input = new PassThrough();
    if (options.tty) {
      Object.assign(input, { isTTY: true });
    }
    const output = new CapturedOutput();
    const reader = new LineReader(input, output);
    let written = '';
    const prompter = new InteractionPrompter(reader, (text) => (written += text), () => new Date('2030-01-01T00:00:00.000Z'));
    return { input, reader, prompter, written: () => written };
  }

  it('at a terminal, ignores lines typed before the question instead of taking them as its answer', async () => {
    const { input, reader, prompter, written } = overStdin({ tty: true });
    input.write('stray\nlines\n');
    await settle();
    const answer = prompter.ask(interaction({ kind: 'free_text', prompt: 'Name?' }), signal);
    await settle();
    input.write('Ada\n');
    await expect(answer).resolves.toEqual({ text: 'Ada' });
    expect(written()).toContain('  (2 lines typed before this question ignored)\n');
    reader.close();
  });

  it('keeps lines piped in ahead of the question', async () => {
    const { input, reader, prompter, written } = overStdin({ tty: false });
    input.write('Ada\n');
    await settle();
    await expect(prompter.ask(interaction({ kind: 'free_text', prompt: 'Name?' }), signal)).resolves.toEqual({ text: 'Ada' });
    expect(written()).not.toContain('ignored');
    reader.close();
  });

  it('takes the end of input at an optional field as "none" and still gives the answer', async () => {
    const review = overStdin({ tty: false });
    review.input.end('y\n');
    await expect(review.prompter.ask(interaction({ kind: 'review', prompt: 'T', markdown: 'm' }), signal)).resolves.toEqual({ approved: true });
    const deny = overStdin({ tty: false });
    deny.input.end('d\n');
    await expect(deny.prompter.ask(interaction(shell), signal)).resolves.toEqual({ decision: 'deny' });
    const required = overStdin({ tty: false });
    required.input.end('');
    await expect(required.prompter.ask(interaction({ kind: 'confirm', prompt: 'Sure?' }), signal)).rejects.toBeInstanceOf(EndOfInputError);
  });

  it('escapes control characters in what the model wrote before showing it', async () => {
    const { input, reader, prompter, written } = overStdin({ tty: false });
    input.write('y\n\n');
    const prompt: Prompt = { kind: 'review', prompt: 'Ship\x1b]0;pwned\x07?', markdown: '\x1b[2Jsafe \u202etxt.exe' };
    await prompter.ask(interaction(prompt), signal);
    expect(written()).toContain('? Ship\\x1b]0;pwned\\x07?');
    expect(written()).toContain('\\x1b[2Jsafe \\u202etxt.exe');
    // eslint-disable-next-line no-control-regex -- looking for raw control characters is the point
    expect(written()).not.toMatch(/[\x1b\x07\u202e]/);
    reader.close();
  });
});
