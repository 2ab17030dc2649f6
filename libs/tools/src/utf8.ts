const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** Bytes the text takes in UTF-8 (a lone surrogate counts as the 3 bytes of U+FFFD it is encoded as). */
export function utf8ByteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/**
 * The longest prefix of `text` that fits in `maxBytes` of UTF-8, cut between user-perceived
 * characters: never inside a code point or surrogate pair, and not between a base letter and its
 * combining marks, nor inside an emoji sequence or a flag. Only when the very first character
 * alone is over the budget (e.g. a letter carrying hundreds of marks) is it cut between code points,
 * so that a bounded field never comes back empty because of one odd cluster.
 */
export function truncateUtf8(text: string, maxBytes: number): string {
  if (!Number.isInteger(maxBytes) || maxBytes < 0) {
    throw new RangeError(`maxBytes must be a non-negative integer, got ${maxBytes}`);
  }
  // A UTF-16 unit never takes more than 3 bytes, so short texts skip the encoding entirely.
  if (text.length * 3 <= maxBytes || utf8ByteLength(text) <= maxBytes) {
    return text;
  }
  const cut = codePointCut(text, maxBytes);
  const cluster = graphemes.segment(text).containing(cut);
  if (cluster !== undefined && cluster.index > 0 && cluster.index < cut) {
    return text.slice(0, cluster.index);
  }
  return text.slice(0, cut);
}

/** The UTF-16 index of the end of the longest run of whole code points fitting in maxBytes. */
function codePointCut(text: string, maxBytes: number): number {
  let bytes = 0;
  let index = 0;
  while (index < text.length) {
    const code = text.charCodeAt(index);
    let size = 3;
    let units = 1;
    if (code < 0x80) {
      size = 1;
    } else if (code < 0x800) {
      size = 2;
    } else if (isHighSurrogate(code) && index + 1 < text.length && isLowSurrogate(text.charCodeAt(index + 1))) {
      size = 4;
      units = 2;
    }
    if (bytes + size > maxBytes) {
      break;
    }
    bytes += size;
    index += units;
  }
  return index;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
