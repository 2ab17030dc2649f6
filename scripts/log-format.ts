const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
const LEVEL_COLORS: Record<string, number> = { TRACE: 90, DEBUG: 90, INFO: 32, WARN: 33, ERROR: 31, FATAL: 31 };
/** Said by every pino line or already shown in the prefix. */
const OMITTED = new Set(['level', 'time', 'pid', 'hostname', 'name', 'msg', 'v', 'err']);

export interface LineFormatOptions {
  /** Width the service name is padded to, so the columns line up. */
  width: number;
  color: boolean;
}

function paint(text: string, code: number, on: boolean): string {
  return on ? `\u001b[${code}m${text}\u001b[0m` : text;
}

/**
 * One output line of a service, prefixed with its name. A pino JSON line becomes
 * `time LEVEL msg {other fields}` plus the error's stack; any other line is printed as is.
 */
export function formatLine(service: string, line: string, { width, color }: LineFormatOptions): string {
  const prefix = `${paint(service.padEnd(width), 36, color)} | `;
  const entry = parsePino(line);
  if (!entry) {
    return prefix + line;
  }
  const level = LEVELS[entry.level as number] ?? String(entry.level);
  const time = typeof entry.time === 'number' ? new Date(entry.time).toISOString().slice(11, 23) : '';
  const rest = Object.fromEntries(Object.entries(entry).filter(([key]) => !OMITTED.has(key)));
  const fields = Object.keys(rest).length > 0 ? ` ${JSON.stringify(rest)}` : '';
  const text = `${time} ${paint(level.padEnd(5), LEVEL_COLORS[level] ?? 0, color)} ${typeof entry.msg === 'string' ? entry.msg : ''}${fields}`;
  const stack = errorStack(entry.err);
  return [prefix + text, ...stack.map((s) => `${prefix}    ${s}`)].join('\n');
}

function parsePino(line: string): Record<string, unknown> | undefined {
  if (!line.startsWith('{')) {
    return undefined;
  }
  try {
    const value: unknown = JSON.parse(line);
    if (value && typeof value === 'object' && 'level' in value) {
      return value;
    }
  } catch {
    // Not JSON after all: shown verbatim.
  }
  return undefined;
}

function errorStack(err: unknown): string[] {
  if (!err || typeof err !== 'object') {
    return [];
  }
  const { stack, message } = err as { stack?: unknown; message?: unknown };
  if (typeof stack === 'string') {
    return stack.split('\n');
  }
  return typeof message === 'string' ? [message] : [];
}
