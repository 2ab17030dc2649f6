/** One line, at most `max` characters: newlines and runs of spaces collapse, the cut is marked. */
export function brief(value: unknown, max = 80): string {
  const text = typeof value === 'string' ? value : safeStringify(value);
  const flat = text.replace(/\s+/g, ' ').trim();
  return truncate(flat, max);
}

export function truncate(text: string, max: number): string {
  if (max < 1) {
    return '';
  }
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

export function indent(text: string, prefix: string): string {
  return text
    .split('\n')
    .map((line) => `${prefix}${line}`)
    .join('\n');
}

function safeStringify(value: unknown): string {
  if (value === undefined) {
    return '';
  }
  try {
    // Typed as string, but undefined for functions and symbols.
    const json: string | undefined = JSON.stringify(value);
    return json ?? '';
  } catch {
    return '[unserialisable]';
  }
}

/**
 * C0 controls (but tab and newline), DEL, C1 controls, and the bidi controls that reorder what is
 * shown: escape sequences in text a model or a user wrote could recolour, move or rewrite the terminal.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const TERMINAL_UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** Text that is safe to write to a terminal: unsafe characters become visible escapes (`\x1b`, `\u202e`); CRLF becomes LF. */
/**
 * JSON text with what JSON.stringify leaves raw and a terminal would act on (DEL, C1 controls, bidi
 * marks) as \u escapes: they occur only inside strings, so the JSON means the same.
 */
export function escapeJsonControls(json: string): string {
  return json.replace(TERMINAL_UNSAFE, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

export function escapeControls(text: string): string {
  return text.replace(/\r\n/g, '\n').replace(TERMINAL_UNSAFE, (char) => {
    const code = char.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}
