import {
  EditTextCollector,
  JsonArgumentsCollector,
  parseApprovalChoice,
  parseApprovalScope,
  parseChoice,
  parseFeedback,
  parseFreeText,
  parseJsonObject,
  parseYesNo,
} from './answer.parsing';

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

describe('parseJsonObject', () => {
  it('accepts a JSON object', () => {
    expect(parseJsonObject(' {"command": "ls", "n": [1]} ')).toEqual({ ok: true, value: { command: 'ls', n: [1] } });
  });

  it.each([
    ['{command: ls}', 'not valid JSON ('],
    ['', 'not valid JSON ('],
    ['[1]', 'must be a JSON object'],
    ['null', 'must be a JSON object'],
    ['"ls"', 'must be a JSON object'],
  ])('rejects %j', (input, error) => {
    expect(parseJsonObject(input)).toMatchObject({ ok: false, error: expect.stringContaining(error) });
  });
});

describe('parseApprovalChoice', () => {
  it.each([
    ['o', 'once'],
    [' S ', 'stage'],
    ['run', 'run'],
    ['e', 'edit'],
    ['Deny', 'deny'],
  ])('reads %j', (input, value) => {
    expect(parseApprovalChoice(input, true)).toEqual({ ok: true, value });
  });

  it('offers only o, e and d when the call has no reusable grant', () => {
    expect(parseApprovalChoice('r', false)).toEqual({ ok: false, error: 'this call offers no reusable grant; answer o (once), e (edit) or d (deny)' });
    expect(parseApprovalChoice('e', false)).toEqual({ ok: true, value: 'edit' });
  });

  it('explains the menu on anything else', () => {
    expect(parseApprovalChoice('y', true)).toEqual({ ok: false, error: 'answer o (once), s (this stage), r (this run), e (edit) or d (deny)' });
  });
});

describe('parseApprovalScope', () => {
  it('reads once, stage or run only', () => {
    expect(parseApprovalScope('r')).toEqual({ ok: true, value: 'run' });
    expect(parseApprovalScope('once')).toEqual({ ok: true, value: 'once' });
    expect(parseApprovalScope('d')).toEqual({ ok: false, error: 'answer o (once), s (this stage) or r (this run)' });
  });
});

describe('JsonArgumentsCollector', () => {
  it('takes a whole object on one line', () => {
    expect(new JsonArgumentsCollector().feed('{"command": "ls"}')).toEqual({ done: true, value: { command: 'ls' } });
  });

  it('keeps reading while the JSON is incomplete', () => {
    const collector = new JsonArgumentsCollector();
    expect(collector.feed('{')).toEqual({ done: false });
    expect(collector.pending).toBe(true);
    expect(collector.feed('  "command": "git status",')).toEqual({ done: false });
    expect(collector.feed('  "timeout": [1,')).toEqual({ done: false });
    expect(collector.feed('2]}')).toEqual({ done: true, value: { command: 'git status', timeout: [1, 2] } });
  });

  it('reports an error more lines cannot fix, and starts over', () => {
    const collector = new JsonArgumentsCollector();
    expect(collector.feed('{"command": }')).toMatchObject({ done: false, error: expect.stringContaining('not valid JSON') });
    expect(collector.pending).toBe(false);
    expect(collector.feed('{"command": "ls')).toMatchObject({ done: false, error: expect.stringContaining('not valid JSON') });
    expect(collector.feed('["ls"]')).toMatchObject({ done: false, error: expect.stringContaining('must be a JSON object') });
    expect(collector.feed('{"command": "ls"}')).toEqual({ done: true, value: { command: 'ls' } });
  });

  it('keeps the arguments on an empty first line', () => {
    expect(new JsonArgumentsCollector().feed('  ')).toEqual({ done: true, value: undefined });
  });
});
