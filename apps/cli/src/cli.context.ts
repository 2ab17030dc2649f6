import type { Readable, Writable } from 'node:stream';
import type { Command } from 'commander';
import type { TokenClaims } from '@parley/contracts';
import { loadConfig, signToken } from '@parley/platform';
import { ApiClient } from './api/api.client';
import { UsageError } from './cli.errors';
import { escapeControls, escapeJsonControls } from './format/text';

/** Everything the CLI touches of its process, so tests can run it in-process. */
export interface CliIo {
  stdin: Readable;
  stdout: Writable;
  stderr: Writable;
  env: Record<string, string | undefined>;
}

export interface GlobalOptions {
  json?: boolean;
  url?: string;
  token?: string;
}

export interface Connection {
  baseUrl: string;
  token: string;
}

export const DEFAULT_URL = 'http://127.0.0.1:8080';

/**
 * Signs a token with PARLEY_JWT_SECRET, carrying PARLEY_JWT_ISSUER / PARLEY_JWT_AUDIENCE when they
 * are set: a gateway configured with them refuses a token without them.
 */
export function signCliToken(claims: TokenClaims, env: Record<string, string | undefined>, ttlSecs?: number): string {
  const { jwtSecret, jwtIssuer, jwtAudience } = loadConfig(env);
  return signToken(claims, jwtSecret, ttlSecs, {
    ...(jwtIssuer === undefined ? {} : { issuer: jwtIssuer }),
    ...(jwtAudience === undefined ? {} : { audience: jwtAudience }),
  });
}

/** The token the CLI uses when none is given, so a local stack works without setup. */
export function devToken(env: Record<string, string | undefined>): string {
  return signCliToken({ tenant: 'dev', sub: 'cli', role: 'admin' }, env);
}

export function resolveConnection(options: GlobalOptions, env: Record<string, string | undefined>): Connection {
  const raw = nonEmpty(options.url) ?? nonEmpty(env.PARLEY_URL) ?? DEFAULT_URL;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`invalid gateway URL "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`invalid gateway URL "${raw}": use http:// or https://`);
  }
  const baseUrl = `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
  const token = nonEmpty(options.token) ?? nonEmpty(env.PARLEY_TOKEN) ?? devToken(env);
  return { baseUrl, token };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/** What a command sees: its io, the global flags, and lazily the connection. */
export class CliContext {
  readonly json: boolean;
  private resolved?: Connection;

  constructor(
    readonly io: CliIo,
    private readonly options: GlobalOptions,
  ) {
    this.json = options.json === true;
  }

  connection(): Connection {
    this.resolved ??= resolveConnection(this.options, this.io.env);
    return this.resolved;
  }

  api(): ApiClient {
    const { baseUrl, token } = this.connection();
    return new ApiClient(baseUrl, token);
  }

  /** Output quotes what models and users wrote: its control characters are escaped (in JSON, as \u escapes). */
  write(text: string): void {
    this.io.stdout.write(this.json ? escapeJsonControls(text) : escapeControls(text));
  }

  line(text = ''): void {
    this.write(`${text}\n`);
  }

  warn(text: string): void {
    this.io.stderr.write(`${escapeControls(text)}\n`);
  }

  printJson(value: unknown): void {
    this.line(JSON.stringify(value, null, 2));
  }
}

/** A command body: returns the exit code. */
export type CommandHandler = (ctx: CliContext, cmd: Command) => Promise<number>;

/** Wraps a handler into a commander action (the wrapper owns exit codes and global options). */
export type ActionFactory = (handler: CommandHandler) => (...args: unknown[]) => Promise<void>;
