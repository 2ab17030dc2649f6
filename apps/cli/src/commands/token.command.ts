import { spawn } from 'node:child_process';
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { z } from 'zod';
import { RoleSchema, SubjectSchema, TenantIdSchema, type Role } from '@parley/contracts';
import { signCliToken, type ActionFactory } from '../cli.context';
import { EXIT } from '../cli.errors';
import { parseIntOption } from './option.parsers';

const DEFAULT_TTL_SECS = 24 * 3600;

interface TokenOptions {
  tenant: string;
  sub: string;
  role: Role;
  ttl: number;
  open?: boolean;
}

export function registerTokenCommand(program: Command, action: ActionFactory): void {
  program
    .command('token')
    .description('print a signed dev token (signed with PARLEY_JWT_SECRET, with PARLEY_JWT_ISSUER / PARLEY_JWT_AUDIENCE when set)')
    .option('--tenant <tenant>', 'tenant id', schemaOption(TenantIdSchema), 'dev')
    .option('--sub <subject>', 'subject (who the token speaks for)', schemaOption(SubjectSchema), 'cli')
    .addOption(new Option('--role <role>', 'role').choices(RoleSchema.options).default('admin'))
    .option('--ttl <secs>', 'lifetime in seconds', parseIntOption(1, 365 * 24 * 3600), DEFAULT_TTL_SECS)
    .option('--open', 'print the web console URL signed in with the token, and try to open it in a browser')
    .action(
      action((ctx, cmd) => {
        const options = cmd.opts<TokenOptions>();
        const token = signCliToken({ tenant: options.tenant, sub: options.sub, role: options.role }, ctx.io.env, options.ttl);
        const consoleUrl = options.open ? `${ctx.connection().baseUrl}/?token=${encodeURIComponent(token)}` : undefined;
        if (ctx.json) {
          const expiresAt = new Date(Date.now() + options.ttl * 1000).toISOString();
          ctx.printJson({ token, tenant: options.tenant, sub: options.sub, role: options.role, expiresAt, ...(consoleUrl ? { consoleUrl } : {}) });
        } else {
          ctx.line(consoleUrl ?? token);
        }
        if (consoleUrl) {
          openInBrowser(consoleUrl, ctx.io.env);
        }
        return Promise.resolve(EXIT.ok);
      }),
    );
}

function schemaOption(schema: z.ZodType<string>): (value: string) => string {
  return (value) => {
    const result = schema.safeParse(value);
    if (!result.success) {
      throw new InvalidArgumentError(result.error.issues.map((issue) => issue.message).join('; '));
    }
    return result.data;
  };
}

/**
 * Best effort: hands the URL to the desktop's opener when there is one. A missing opener (a server,
 * a container) is not an error: the URL is already printed.
 */
function openInBrowser(url: string, env: Record<string, string | undefined>): void {
  const opener = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? undefined : 'xdg-open';
  if (!opener) {
    return;
  }
  try {
    const child = spawn(opener, [url], { detached: true, stdio: 'ignore', env });
    child.on('error', () => undefined);
    child.unref();
  } catch {
    // spawn itself can throw (e.g. EACCES on some systems); the printed URL is enough.
  }
}
