import { InteractionPointSchema, type InteractionPoint } from '@parley/contracts';
import { HUMAN_TOOL_LIMITS, utf8ByteLength } from '@parley/tools';
import { declaredChoices, findChoice, menuChoices } from './checkpoint.choices';
import { DOCUMENT_HEADING, clip, decidePrompt, editPrompt } from './checkpoint.prompt';

const point = (fields: Partial<Record<keyof InteractionPoint, unknown>> = {}): InteractionPoint =>
  InteractionPointSchema.parse({ name: 'review', prompt: 'Is the plan good?', ...fields });

const labels = (p: InteractionPoint): string[] => menuChoices(p).map((choice) => choice.label);

describe('checkpoint choices', () => {
  it('lists options, directive keys, edit options and abort options once each, in that order', () => {
    const p = point({
      options: ['Approve', 'Ship'],
      directives: { 'More detail': 'Add detail.', Shorter: 'Cut it down.' },
      edit_options: ['Let me edit'],
      abort_options: ['Stop'],
    });
    expect(declaredChoices(p)).toEqual([
      { label: 'Approve', role: 'approve' },
      { label: 'Ship', role: 'approve' },
      { label: 'More detail', role: 'revise', directive: 'Add detail.' },
      { label: 'Shorter', role: 'revise', directive: 'Cut it down.' },
      { label: 'Let me edit', role: 'edit' },
      { label: 'Stop', role: 'abort' },
    ]);
  });

  it('gives a label declared twice its strongest role, at its first place', () => {
    const p = point({ options: ['Stop', 'Go'], abort_options: ['Stop'], edit_options: ['Go'], directives: { Go: 'again' } });
    expect(declaredChoices(p)).toEqual([
      { label: 'Stop', role: 'abort' },
      { label: 'Go', role: 'edit' },
    ]);
  });

  it.each<[string, Partial<Record<keyof InteractionPoint, unknown>>, string[]]>([
    ['no options', {}, ['Approve', 'Revise']],
    ['one approving option', { options: ['Looks good'] }, ['Looks good', 'Revise']],
    ['one directive', { directives: { 'More tests': 'Add tests.' } }, ['More tests', 'Approve']],
    ['one edit option', { edit_options: ['Edit'] }, ['Edit', 'Approve']],
    ['one abort option', { abort_options: ['Stop'] }, ['Stop', 'Approve']],
    ['an option named like a default', { options: ['revise'] }, ['revise', 'Try again']],
    ['an abort option named like a default', { abort_options: ['APPROVE'] }, ['APPROVE', 'Continue']],
    ['two options', { options: ['Yes'], abort_options: ['No'] }, ['Yes', 'No']],
  ])('menu with %s', (_case, fields, expected) => {
    expect(labels(point(fields))).toEqual(expected);
  });

  it('gives the default Revise a directive that quotes the question', () => {
    const revise = menuChoices(point()).find((choice) => choice.label === 'Revise');
    expect(revise).toMatchObject({ role: 'revise', isDefault: true });
    expect(revise?.directive).toBe('The person chose "Revise" at the checkpoint: Is the plan good? Revise your work and try again.');
  });

  it('finds a choice by role priority among normalised matches, exact first', () => {
    const choices = declaredChoices(point({ options: ['stop-now'], abort_options: ['Stop now'] }));
    expect(findChoice('STOP NOW', choices)).toMatchObject({ label: 'Stop now', role: 'abort' });
    expect(findChoice('stop-now', choices)).toMatchObject({ label: 'stop-now', role: 'approve' });
    expect(findChoice('continue', choices)).toBeNull();
  });
});

describe('decidePrompt', () => {
  it('offers a single pick among the menu, describing what the non-approving choices do', () => {
    const p = point({ options: ['Approve'], directives: { 'More detail': 'Add detail.' }, edit_options: ['Edit'], abort_options: ['Stop'] });
    expect(decidePrompt(p, null)).toEqual({
      kind: 'multiple_choice',
      prompt: 'Is the plan good?',
      options: [
        { label: 'Approve' },
        { label: 'More detail', description: 'Send the stage back: Add detail.' },
        { label: 'Edit', description: 'Edit the output yourself, then decide again' },
        { label: 'Stop', description: 'Cancel the run' },
      ],
      multi: false,
    });
  });

  it('adds described defaults to a menu with fewer than 2 choices', () => {
    expect(decidePrompt(point(), null)).toMatchObject({
      options: [
        { label: 'Approve', description: 'Accept the output and move on' },
        { label: 'Revise', description: 'Send the stage back to be reworked' },
      ],
    });
  });

  it('lists what may be typed below a free_text question', () => {
    const p = point({ style: 'free_text', options: ['Approve'], directives: { Redo: 'Redo it.' }, abort_options: ['Stop'] });
    expect(decidePrompt(p, null)).toEqual({
      kind: 'free_text',
      prompt: 'Is the plan good?\n\nType "Approve", "Redo" or "Stop" to choose; anything else approves and is passed on as a note.',
    });
    expect(decidePrompt(point({ style: 'free_text', edit_options: ['Edit'] }), null)).toEqual({
      kind: 'free_text',
      prompt: 'Is the plan good?\n\nType "Edit" to choose; anything else approves and is passed on as a note.',
    });
  });

  it('asks a free_text question without options as it is', () => {
    expect(decidePrompt(point({ style: 'free_text', prompt: '  Any remarks?  ' }), null)).toEqual({ kind: 'free_text', prompt: 'Any remarks?' });
  });

  it('asks a confirm question as it is', () => {
    expect(decidePrompt(point({ style: 'confirm', options: ['ignored'] }), null)).toEqual({ kind: 'confirm', prompt: 'Is the plan good?' });
  });

  it.each(['multiple_choice', 'free_text', 'confirm'])('shows the current document below a %s question', (style) => {
    const prompt = decidePrompt(point({ style }), '# Plan\n1. Do it');
    expect(prompt.prompt).toMatch(new RegExp(`^Is the plan good\\?[^]*\\n\\n${DOCUMENT_HEADING}\\n# Plan\\n1\\. Do it$`));
  });

  it('leaves out a blank document', () => {
    expect(decidePrompt(point({ style: 'confirm' }), ' \n ').prompt).toBe('Is the plan good?');
  });

  it('bounds the question to 2000 bytes and the document to 64 KiB', () => {
    const question = 'é'.repeat(1999); // 3998 bytes, within the schema's 4000 characters
    const document = 'x'.repeat(100_000);
    for (const style of ['multiple_choice', 'free_text', 'confirm']) {
      const text = decidePrompt(point({ style, prompt: question, options: ['Approve'], abort_options: ['Stop'] }), document).prompt;
      const [head, body] = text.split(`\n\n${DOCUMENT_HEADING}\n`);
      expect(utf8ByteLength(head)).toBeLessThanOrEqual(HUMAN_TOOL_LIMITS.questionBytes);
      expect(head).toContain('…');
      expect(utf8ByteLength(body)).toBeLessThanOrEqual(HUMAN_TOOL_LIMITS.documentBytes);
      expect(body.endsWith('…')).toBe(true);
    }
  });

  it('keeps the options line of a long free_text question', () => {
    const text = decidePrompt(point({ style: 'free_text', prompt: 'q'.repeat(4000), options: ['Approve'] }), null).prompt;
    expect(utf8ByteLength(text)).toBeLessThanOrEqual(HUMAN_TOOL_LIMITS.questionBytes);
    expect(text.endsWith('Type "Approve" to choose; anything else approves and is passed on as a note.')).toBe(true);
  });

  it('gives a very long options line at most half of the question', () => {
    const options = Array.from({ length: 20 }, (_, i) => `${i}${'o'.repeat(150)}`);
    const text = decidePrompt(point({ style: 'free_text', prompt: 'Pick one.', options }), null).prompt;
    expect(utf8ByteLength(text)).toBeLessThanOrEqual(HUMAN_TOOL_LIMITS.questionBytes);
    expect(text.startsWith('Pick one.\n\nType "0')).toBe(true);
    expect(text.endsWith('…')).toBe(true);
  });
});

describe('editPrompt', () => {
  it('hands the document over for editing', () => {
    expect(editPrompt(point(), '# Plan')).toEqual({
      kind: 'edit_text',
      prompt: 'Edit the stage\'s output for checkpoint "review"; your version replaces it, then you are asked again.\n\nIs the plan good?',
      document: '# Plan',
    });
  });

  it('cuts a long document without a marker, and says so', () => {
    const prompt = editPrompt(point({ prompt: 'p'.repeat(4000) }), 'ä'.repeat(40_000));
    if (prompt.kind !== 'edit_text') {
      throw new Error('expected an edit_text prompt');
    }
    expect(utf8ByteLength(prompt.document)).toBe(HUMAN_TOOL_LIMITS.documentBytes);
    expect(prompt.document).toBe('ä'.repeat(HUMAN_TOOL_LIMITS.documentBytes / 2));
    expect(prompt.prompt).toContain('shown cut: your version replaces all of it.');
    expect(utf8ByteLength(prompt.prompt)).toBeLessThanOrEqual(HUMAN_TOOL_LIMITS.questionBytes);
  });
});

describe('clip', () => {
  it('keeps text that fits and ends cut text with an ellipsis within the budget', () => {
    expect(clip('abc', 3)).toBe('abc');
    expect(clip('abcdef', 5)).toBe('ab…');
    expect(utf8ByteLength(clip('😀'.repeat(10), 10))).toBeLessThanOrEqual(10);
  });
});
