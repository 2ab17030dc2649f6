import { PromptSchema } from '@parley/contracts';
import { prepareHumanToolCall } from './human-tool.arguments';
import { HUMAN_TOOL_LIMITS } from './tool.limits';
import { HUMAN_TOOLS } from './tool.names';

const bytes = (text: string): number => Buffer.byteLength(text, 'utf8');

function prompt(result: ReturnType<typeof prepareHumanToolCall>) {
  if (!result.ok) {
    throw new Error(`expected ok, got: ${result.error}`);
  }
  expect(PromptSchema.parse(result.prompt)).toEqual(result.prompt);
  return result.prompt;
}

function error(result: ReturnType<typeof prepareHumanToolCall>): string {
  if (result.ok) {
    throw new Error(`expected an error, got ${JSON.stringify(result.prompt)}`);
  }
  return result.error;
}

describe('prepareHumanToolCall', () => {
  it('maps each human tool to its interaction kind', () => {
    expect(prompt(prepareHumanToolCall('ask_user_text', { question: 'Which city?' }))).toEqual({ kind: 'free_text', prompt: 'Which city?' });
    expect(prompt(prepareHumanToolCall('ask_user_confirm', { question: 'Deploy?' }))).toEqual({ kind: 'confirm', prompt: 'Deploy?' });
    expect(prompt(prepareHumanToolCall('ask_user_choice', { question: 'Pick', options: [{ label: 'A' }, { label: 'B' }] }))).toEqual({
      kind: 'multiple_choice',
      prompt: 'Pick',
      options: [{ label: 'A' }, { label: 'B' }],
      multi: false,
    });
    expect(prompt(prepareHumanToolCall('edit_document', { instructions: 'Fix typos', content: 'Helo' }))).toEqual({
      kind: 'edit_text',
      prompt: 'Fix typos',
      document: 'Helo',
    });
    expect(prompt(prepareHumanToolCall('present_for_review', { title: 'Plan', markdown: '# Plan' }))).toEqual({
      kind: 'review',
      prompt: 'Plan',
      markdown: '# Plan',
    });
  });

  it('trims strings', () => {
    expect(prompt(prepareHumanToolCall('ask_user_text', { question: '  \n Which city? \t' }))).toEqual({
      kind: 'free_text',
      prompt: 'Which city?',
    });
    expect(
      prompt(
        prepareHumanToolCall('ask_user_choice', {
          question: ' Pick ',
          options: [{ label: ' A ', description: '  first ' }, { label: 'B', description: '   ' }],
          multi: true,
        }),
      ),
    ).toEqual({ kind: 'multiple_choice', prompt: 'Pick', options: [{ label: 'A', description: 'first' }, { label: 'B' }], multi: true });
  });

  it('refuses an unknown field, naming it, rather than asking without it', () => {
    expect(error(prepareHumanToolCall('ask_user_text', { question: 'Which city?', extra: 1 }))).toBe('invalid ask_user_text input: extra: unknown field');
    expect(error(prepareHumanToolCall('ask_user_confirm', { question: 'Deploy?', default: true }))).toBe('invalid ask_user_confirm input: default: unknown field');
    expect(error(prepareHumanToolCall('edit_document', { instructions: 'Fix', content: 'x', format: 'md' }))).toBe('invalid edit_document input: format: unknown field');
    expect(error(prepareHumanToolCall('present_for_review', { title: 'T', markdown: 'm', due: 'today' }))).toBe(
      'invalid present_for_review input: due: unknown field',
    );
    expect(error(prepareHumanToolCall('ask_user_choice', { question: 'Pick', options: ['A', 'B'], allow_other: true }))).toBe(
      'invalid ask_user_choice input: allow_other: unknown field',
    );
    expect(error(prepareHumanToolCall('ask_user_choice', { question: 'Pick', options: [{ label: 'A', colour: 'red' }, { label: 'B' }] }))).toBe(
      'invalid ask_user_choice input: options.0.colour: unknown field',
    );
  });

  it.each(['ask_user_text', 'ask_user_confirm'] as const)('%s: a missing, empty or non-string question names the field', (name) => {
    expect(error(prepareHumanToolCall(name, {}))).toBe(`invalid ${name} input: question: is required`);
    expect(error(prepareHumanToolCall(name, { question: null }))).toBe(`invalid ${name} input: question: is required`);
    expect(error(prepareHumanToolCall(name, { question: '   ' }))).toBe(`invalid ${name} input: question: must not be empty`);
    expect(error(prepareHumanToolCall(name, { question: 42 }))).toBe(`invalid ${name} input: question: must be a string`);
  });

  it.each(HUMAN_TOOLS)('%s: input that is not an object is an error', (name) => {
    expect(error(prepareHumanToolCall(name, 'hello'))).toBe(`invalid ${name} input: expected a JSON object`);
    expect(error(prepareHumanToolCall(name, null))).toBe(`invalid ${name} input: expected a JSON object`);
    expect(error(prepareHumanToolCall(name, ['a']))).toBe(`invalid ${name} input: expected a JSON object`);
  });

  it('names the missing fields of edit_document and present_for_review', () => {
    expect(error(prepareHumanToolCall('edit_document', { content: 'x' }))).toBe('invalid edit_document input: instructions: is required');
    expect(error(prepareHumanToolCall('edit_document', { instructions: 'x' }))).toBe('invalid edit_document input: content: is required');
    expect(error(prepareHumanToolCall('present_for_review', { markdown: 'x' }))).toBe('invalid present_for_review input: title: is required');
    expect(error(prepareHumanToolCall('present_for_review', { title: 'T', markdown: ' ' }))).toBe(
      'invalid present_for_review input: markdown: must not be empty',
    );
  });

  it('lets the person edit an empty document', () => {
    expect(prompt(prepareHumanToolCall('edit_document', { instructions: 'Write the intro', content: '' }))).toEqual({
      kind: 'edit_text',
      prompt: 'Write the intro',
      document: '',
    });
  });

  describe('bounds', () => {
    it('cuts the question to 2000 bytes without splitting a character', () => {
      const question = 'é'.repeat(1500); // 3000 bytes
      const shown = prompt(prepareHumanToolCall('ask_user_text', { question }));
      expect(shown.prompt).toBe('é'.repeat(1000));
      const emoji = prompt(prepareHumanToolCall('ask_user_confirm', { question: `a${'😀'.repeat(600)}` }));
      expect(emoji.prompt).toBe(`a${'😀'.repeat(499)}`);
      expect(bytes(emoji.prompt)).toBe(1997);
    });

    it('leaves a question of exactly 2000 bytes untouched', () => {
      const question = '日'.repeat(666) + 'ab';
      expect(bytes(question)).toBe(2000);
      expect(prompt(prepareHumanToolCall('ask_user_text', { question })).prompt).toBe(question);
    });

    it('trims again after cutting so no dangling whitespace is shown', () => {
      const question = `${'a'.repeat(1999)} tail`;
      expect(prompt(prepareHumanToolCall('ask_user_text', { question })).prompt).toBe('a'.repeat(1999));
    });

    it('bounds labels to 200 bytes, descriptions to 500, and keeps the first 20 options', () => {
      const options = Array.from({ length: 25 }, (_, index) => ({
        label: `${index} ${'x'.repeat(300)}`,
        description: `${index} ${'日'.repeat(300)}`,
      }));
      const shown = prompt(prepareHumanToolCall('ask_user_choice', { question: 'Pick', options }));
      if (shown.kind !== 'multiple_choice') {
        throw new Error('expected multiple_choice');
      }
      expect(shown.options).toHaveLength(HUMAN_TOOL_LIMITS.maxOptions);
      expect(shown.options[19].label.startsWith('19 ')).toBe(true);
      for (const option of shown.options) {
        expect(bytes(option.label)).toBeLessThanOrEqual(200);
        expect(bytes(option.description ?? '')).toBeLessThanOrEqual(500);
        expect(bytes(option.description ?? '')).toBeGreaterThan(495);
      }
    });

    it('bounds the review title to 300 bytes and markdown / documents to 64 KiB', () => {
      const review = prompt(prepareHumanToolCall('present_for_review', { title: '题'.repeat(200), markdown: '✓'.repeat(30_000) }));
      if (review.kind !== 'review') {
        throw new Error('expected review');
      }
      expect(review.prompt).toBe('题'.repeat(100));
      expect(review.markdown).toBe('✓'.repeat(21_845));
      const edit = prompt(prepareHumanToolCall('edit_document', { instructions: 'Edit', content: 'z'.repeat(70_000) }));
      if (edit.kind !== 'edit_text') {
        throw new Error('expected edit_text');
      }
      expect(bytes(edit.document)).toBe(64 * 1024);
    });
  });

  describe('ask_user_choice options', () => {
    const ask = (options: unknown, extra: Record<string, unknown> = {}) =>
      prepareHumanToolCall('ask_user_choice', { question: 'Pick one', options, ...extra });

    it('drops empty options before counting', () => {
      const shown = prompt(ask([{ label: '  ' }, null, { label: 'A' }, '', { description: 'no label' }, { label: 'B' }]));
      expect(shown).toMatchObject({ options: [{ label: 'A' }, { label: 'B' }] });
    });

    it('takes bare strings as labels', () => {
      expect(prompt(ask(['Red', ' Blue ']))).toMatchObject({ options: [{ label: 'Red' }, { label: 'Blue' }] });
    });

    it('needs at least 2 options after normalisation', () => {
      expect(error(ask([{ label: 'Only' }, { label: ' ' }]))).toMatch(/^ask_user_choice needs at least 2 options \(got 1 after dropping empty ones\)/);
      expect(error(ask([]))).toMatch(/^ask_user_choice needs at least 2 options \(got 0/);
      expect(error(prepareHumanToolCall('ask_user_choice', { question: 'Pick' }))).toMatch(/^ask_user_choice needs at least 2 options/);
    });

    it('refuses duplicate labels after trimming', () => {
      expect(error(ask([{ label: 'Yes' }, { label: ' Yes ' }]))).toBe(
        'ask_user_choice options must have distinct labels: "Yes" appears more than once',
      );
    });

    it('refuses labels that only become identical once cut to 200 bytes, since the person could not tell them apart', () => {
      const common = 'y'.repeat(200);
      expect(error(ask([{ label: `${common}1` }, { label: `${common}2` }]))).toMatch(/distinct labels/);
    });

    it('still refuses a duplicate among the first 20, not among those dropped', () => {
      const labels = Array.from({ length: 20 }, (_, index) => `o${index}`);
      expect(prompt(ask([...labels, 'o0']))).toMatchObject({ options: labels.map((label) => ({ label })) });
    });

    it('defaults multi to false and takes null as not given', () => {
      expect(prompt(ask(['A', 'B']))).toMatchObject({ multi: false });
      expect(prompt(ask(['A', 'B'], { multi: null }))).toMatchObject({ multi: false });
      expect(prompt(ask(['A', 'B'], { multi: true }))).toMatchObject({ multi: true });
    });

    it('names malformed fields', () => {
      expect(error(ask(['A', 'B'], { multi: 'yes' }))).toBe('invalid ask_user_choice input: multi: must be true or false');
      expect(error(ask('A, B'))).toBe('invalid ask_user_choice input: options: must be an array of {label, description?}');
      expect(error(ask([{ label: 'A' }, { label: 7 }]))).toBe('invalid ask_user_choice input: options.1.label: must be a string');
      expect(error(ask([{ label: 'A' }, 5]))).toMatch(/^invalid ask_user_choice input: options\.1: /);
      expect(error(prepareHumanToolCall('ask_user_choice', { options: ['A', 'B'] }))).toBe(
        'invalid ask_user_choice input: question: is required',
      );
    });
  });
});
