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
