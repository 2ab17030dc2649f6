import { truncateUtf8, utf8ByteLength } from './utf8';

const bytes = (text: string): number => Buffer.byteLength(text, 'utf8');

describe('utf8ByteLength', () => {
  it.each([
    ['', 0],
    ['abc', 3],
    ['é', 2],
    ['日本', 6],
    ['😀', 4],
    ['\ud800', 3],
  ])('%j is %i bytes', (text, expected) => {
    expect(utf8ByteLength(text)).toBe(expected);
  });
});

describe('truncateUtf8', () => {
  it('returns the very same text when it fits, including at exactly the limit', () => {
    expect(truncateUtf8('hello', 10)).toBe('hello');
    expect(truncateUtf8('hello', 5)).toBe('hello');
    expect(truncateUtf8('日本語', 9)).toBe('日本語');
    expect(truncateUtf8('😀😀', 8)).toBe('😀😀');
    expect(truncateUtf8('', 0)).toBe('');
  });

  it('cuts ASCII at the byte limit', () => {
    expect(truncateUtf8('hello', 4)).toBe('hell');
    expect(truncateUtf8('hello', 0)).toBe('');
  });

  it('never cuts a 2-byte character in half', () => {
    expect(truncateUtf8('éé', 3)).toBe('é');
    expect(truncateUtf8('éé', 2)).toBe('é');
    expect(truncateUtf8('éé', 1)).toBe('');
  });

  it('never cuts a 3-byte CJK character in half', () => {
    expect(truncateUtf8('日本語', 8)).toBe('日本');
    expect(truncateUtf8('日本語', 7)).toBe('日本');
    expect(truncateUtf8('日本語', 6)).toBe('日本');
    expect(truncateUtf8('日本語', 2)).toBe('');
    expect(truncateUtf8('a日', 3)).toBe('a');
  });

  it('never splits a surrogate pair (4-byte emoji)', () => {
    expect(truncateUtf8('a😀', 4)).toBe('a');
    expect(truncateUtf8('a😀', 5)).toBe('a😀');
    expect(truncateUtf8('😀😀', 7)).toBe('😀');
    expect(truncateUtf8('😀', 3)).toBe('');
    expect(truncateUtf8('𠀀x', 4)).toBe('𠀀');
  });

  it('keeps a base letter together with its combining marks', () => {
    const decomposed = 'ae\u0301'; // a, e, combining acute: 1 + 1 + 2 bytes
    expect(truncateUtf8(decomposed, 3)).toBe('a');
    expect(truncateUtf8(decomposed, 4)).toBe(decomposed);
    expect(truncateUtf8('xn\u0303\u0323y', 5)).toBe('x');
  });

  it('keeps ZWJ emoji sequences, skin tones and flags whole', () => {
    const family = '👨‍👩‍👧'; // 4 + 3 + 4 + 3 + 4 bytes
    expect(bytes(family)).toBe(18);
    expect(truncateUtf8(`x${family}`, 18)).toBe('x');
    expect(truncateUtf8(`x${family}`, 19)).toBe(`x${family}`);
    expect(truncateUtf8('ok👍🏽', 9)).toBe('ok');
    expect(truncateUtf8('🇫🇷🇩🇪', 12)).toBe('🇫🇷');
    expect(truncateUtf8('a🇫🇷', 8)).toBe('a');
  });

  it('falls back to a code point cut when the first character alone is over the budget', () => {
    const zalgo = `e${'\u0301'.repeat(10)}`;
    expect(truncateUtf8(zalgo, 5)).toBe('e\u0301\u0301');
    expect(truncateUtf8(`${family()}tail`, 9)).toBe('👨‍');
    expect(truncateUtf8('🇫🇷🇩🇪', 7)).toBe('🇫');
  });

  it('counts a lone surrogate as the 3 bytes of U+FFFD and keeps it whole', () => {
    expect(truncateUtf8('a\ud800b', 4)).toBe('a\ud800');
    expect(truncateUtf8('a\ud800b', 3)).toBe('a');
  });

  it('rejects a negative or fractional budget', () => {
    expect(() => truncateUtf8('x', -1)).toThrow(RangeError);
    expect(() => truncateUtf8('x', 1.5)).toThrow(RangeError);
  });

  it('always gives the longest whole-character prefix within budget (random texts)', () => {
    const alphabet = ['a', ' ', 'é', '\u0301', '日', '😀', '\u200d', '🇫', '🇷', '👍', '🏽', '\n', '\ud800'];
    const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
    let seed = 42;
    const next = (): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed;
    };
    for (let round = 0; round < 1000; round += 1) {
      const text = Array.from({ length: next() % 40 }, () => alphabet[next() % alphabet.length]).join('');
      const max = next() % (bytes(text) + 2);
      const cut = truncateUtf8(text, max);
      expect(text.startsWith(cut)).toBe(true);
      expect(bytes(cut)).toBeLessThanOrEqual(max);
      const last = cut.charCodeAt(cut.length - 1);
      expect(last >= 0xd800 && last <= 0xdbff && text.charCodeAt(cut.length) >= 0xdc00 && text.charCodeAt(cut.length) <= 0xdfff).toBe(false);
      if (cut === text) {
        continue;
      }
      const clusters = [...segmenter.segment(text)];
      const end = clusters.findIndex((cluster) => cluster.index >= cut.length);
      if (cut.length > 0 && end > 0 && clusters[end]?.index === cut.length) {
        // At a cluster boundary: the next whole cluster would not have fitted.
        expect(bytes(text.slice(0, cut.length + clusters[end].segment.length))).toBeGreaterThan(max);
      } else {
        // Otherwise only inside the first cluster, which alone is over budget.
        expect(bytes(clusters[0].segment)).toBeGreaterThan(max);
      }
    }
  });
});

function family(): string {
  return '👨‍👩‍👧';
}
