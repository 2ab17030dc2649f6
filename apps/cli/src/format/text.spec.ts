import { CapturedOutput } from '../testing/cli.harness';
import { brief, escapeControls, escapeJsonControls, truncate } from './text';
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

describe('escapeControls', () => {
  it('makes C0, DEL, C1 and bidi controls visible, and keeps tabs, newlines and other text', () => {
    expect(escapeControls('red \x1b[31mtext\x1b[0m\x07 \x7f \x9b2J')).toBe('red \\x1b[31mtext\\x1b[0m\\x07 \\x7f \\x9b2J');
    expect(escapeControls('abc\u202edef\u2066x\u2069 \u200f')).toBe('abc\\u202edef\\u2066x\\u2069 \\u200f');
    expect(escapeControls('a\tb\nc — ü ✓ 日本')).toBe('a\tb\nc — ü ✓ 日本');
  });

  it('turns CRLF into LF and escapes a lone carriage return, which could overwrite a line', () => {
    expect(escapeControls('one\r\ntwo\rthree')).toBe('one\ntwo\\x0dthree');
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

  it('escapes control characters in streamed text and in lines', () => {
    const stream = new CapturedOutput();
    const out = new TextOutput(stream);
    out.text('\x1b[2J');
    out.line('\u202eevil');
    expect(stream.text).toBe('\\x1b[2J\n\\u202eevil\n');
  });
});

describe('escapeJsonControls', () => {
  it('escapes what JSON leaves raw and a terminal acts on, keeping the JSON the same', () => {
    const value = { text: 'del\u007f c1\u009b[2J bidi\u202eevil tab\tnewline\n é' };
    const out = escapeJsonControls(JSON.stringify(value));
    expect(out).toBe('{"text":"del\\u007f c1\\u009b[2J bidi\\u202eevil tab\\tnewline\\n é"}');
    expect(JSON.parse(out)).toEqual(value);
  });
});
