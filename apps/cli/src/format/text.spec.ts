import { CapturedOutput } from '../testing/cli.harness';
import { brief, truncate } from './text';
import { TextOutput } from './text.output';

describe('brief', () => {
  it('flattens strings and JSON-encodes other values', () => {
    expect(brief('a\n  b\tc')).toBe('a b c');
    expect(brief({ path: 'x' })).toBe('{"path":"x"}');
    expect(brief(undefined)).toBe('');
  });

  it('cuts at the limit with an ellipsis', () => {
    expect(brief('abcdef', 4)).toBe('abc…');
    expect(truncate('abcd', 4)).toBe('abcd');
  });
});

describe('TextOutput', () => {
  it('ends unfinished streamed text before a whole line', () => {
    const stream = new CapturedOutput();
    const out = new TextOutput(stream);
    out.text('Hel');
    out.text('lo');
    out.line('→ tool');
    out.text('done\n');
    out.breakLine();
    out.line('end');
    expect(stream.text).toBe('Hello\n→ tool\ndone\nend\n');
  });
});
