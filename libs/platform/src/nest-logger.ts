import type { LoggerService } from '@nestjs/common';
import type { Level, Logger } from 'pino';

/** Nest's own start-up chatter (routes mapped, modules loaded): debug, not info. */
const NEST_CHATTER = new Set(['NestFactory', 'InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestApplication', 'WebSocketsController']);

/**
 * Nest's logger interface over pino, so every line a service writes is one JSON object. A message
 * that is an object becomes fields (`{ tenant, runId, interactionId, msg }`); the Nest context
 * (the class that logged) is the `context` field.
 */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly pino: Logger) {}

  log(message: unknown, ...rest: unknown[]): void {
    this.write('info', message, rest);
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.write('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.write('warn', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]): void {
    this.write('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]): void {
    this.write('trace', message, rest);
  }
  fatal(message: unknown, ...rest: unknown[]): void {
    this.write('fatal', message, rest);
  }

  private write(level: Level, message: unknown, rest: unknown[]): void {
    // Nest passes (message, context) and, for errors, (message, stack, context).
    const context = rest.length > 0 && typeof rest[rest.length - 1] === 'string' ? (rest[rest.length - 1] as string) : undefined;
    const at = level === 'info' && context && NEST_CHATTER.has(context) ? 'debug' : level;
    // A line per answer on the hot path: below the level, nothing is built.
    if (!this.pino.isLevelEnabled(at)) {
      return;
    }
    const stack = level === 'error' && rest.length > 1 && typeof rest[0] === 'string' ? rest[0] : undefined;
    const fields: Record<string, unknown> = { ...(context ? { context } : {}), ...(stack ? { stack } : {}) };
    if (message instanceof Error) {
      this.pino[at]({ ...fields, err: message }, message.message);
    } else if (message !== null && typeof message === 'object') {
      const { msg, ...data } = message as Record<string, unknown>;
      this.pino[at]({ ...fields, ...data }, typeof msg === 'string' ? msg : '');
    } else {
      this.pino[at](fields, String(message));
    }
  }
}
