import { EditTextCollector, parseChoice, parseFeedback, parseFreeText, parseYesNo } from './answer.parsing';

const single = { kind: 'multiple_choice' as const, prompt: 'Pick', options: [{ label: 'a' }, { label: 'b' }, { label: 'c' }], multi: false };
const multi = { ...single, multi: true };

describe('parseFreeText', () => {
  it('trims and accepts any non-empty line', () => {
    expect(parseFreeText('  hello there ')).toEqual({ ok: true, value: { text: 'hello there' } });
  });

  it('refuses an empty line', () => {
    expect(parseFreeText('   ')).toMatchObject({ ok: false, error: expect.stringContaining('cannot be empty') });
  });
});

describe('parseChoice', () => {
  it('maps a single 0-based pick to {choice}', () => {
    expect(parseChoice(' 2 ', single)).toEqual({ ok: true, value: { choice: 2 } });
  });

  it('maps comma- or space-separated picks to {choices} for multi', () => {
    expect(parseChoice('0, 2', multi)).toEqual({ ok: true, value: { choices: [0, 2] } });
    expect(parseChoice('1 0', multi)).toEqual({ ok: true, value: { choices: [1, 0] } });
    expect(parseChoice('1', multi)).toEqual({ ok: true, value: { choices: [1] } });
  });

  it.each([
    ['', single, 'type the number of an option (0-2)'],
    ['', multi, 'type one or more option numbers (0-2), e.g. 0,2'],
    ['x', single, '"x" is not an option number (0-2)'],
    ['-1', single, '"-1" is not an option number (0-2)'],
    ['1.5', single, '"1.5" is not an option number (0-2)'],
    ['3', single, 'there is no option 3 (choose 0-2)'],
    ['0,0', multi, 'option 0 is picked twice'],
    ['0,1', single, 'this question takes exactly one option'],
  ])('rejects %j', (input, prompt, error) => {
    expect(parseChoice(input, prompt)).toEqual({ ok: false, error });
  });
});

describe('parseYesNo', () => {
  it.each([
    ['y', true],
    ['YES', true],
    [' n ', false],
    ['No', false],
  ])('reads %j', (input, value) => {
    expect(parseYesNo(input)).toEqual({ ok: true, value });
  });

  it('rejects anything else', () => {
    expect(parseYesNo('sure')).toEqual({ ok: false, error: 'answer y or n' });
  });
});

describe('parseFeedback', () => {
  it('treats an empty line as no feedback', () => {
    expect(parseFeedback('  ')).toBeUndefined();
    expect(parseFeedback(' good ')).toBe('good');
  });
});

describe('EditTextCollector', () => {
  it('collects lines until a lone "."', () => {
    const collector = new EditTextCollector('old');
    expect(collector.feed('first')).toEqual({ done: false });
    expect(collector.feed('')).toEqual({ done: false });
    expect(collector.feed('third')).toEqual({ done: false });
    expect(collector.feed('. ')).toEqual({ done: true, text: 'first\n\nthird' });
  });

  it('keeps the document on an empty first line', () => {
    expect(new EditTextCollector('old').feed('')).toEqual({ done: true, text: 'old' });
  });

  it('sends an empty document when "." comes first', () => {
    expect(new EditTextCollector('old').feed('.')).toEqual({ done: true, text: '' });
  });

  it('keeps lines that merely contain a dot', () => {
    const collector = new EditTextCollector('old');
    collector.feed('..');
    collector.feed('a.');
    expect(collector.feed('.')).toEqual({ done: true, text: '..\na.' });
  });
});
