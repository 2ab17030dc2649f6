import type { Interaction, Prompt } from '@parley/contracts';
import { InteractionPrompter } from './interaction.prompter';
import { PromptCancelledError, type LineSource } from './line.reader';

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
}

const interaction = (prompt: Prompt): Interaction => ({
  id: 'i-1',
  tenant: 'dev',
  runId: 'r-1',
  owner: 'cli',
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
