import { InvalidArgumentError, Option, type Command } from 'commander';
import type { z } from 'zod';
import { RoleSchema, SubjectSchema, TenantIdSchema, type Role } from '@parley/contracts';
import { loadConfig, signToken } from '@parley/platform';
import type { ActionFactory } from '../cli.context';
import { EXIT } from '../cli.errors';
import { parseIntOption } from './option.parsers';

const DEFAULT_TTL_SECS = 24 * 3600;

interface TokenOptions {
  tenant: string;
  sub: string;
  role: Role;
  ttl: number;
}

export function registerTokenCommand(program: Command, action: ActionFactory): void {
  program
    .command('token')
    .description('print a signed dev token (signed with PARLEY_JWT_SECRET)')
    .option('--tenant <tenant>', 'tenant id', schemaOption(TenantIdSchema), 'dev')
    .option('--sub <subject>', 'subject (who the token speaks for)', schemaOption(SubjectSchema), 'cli')
    .addOption(new Option('--role <role>', 'role').choices(RoleSchema.options).default('admin'))
    .option('--ttl <secs>', 'lifetime in seconds', parseIntOption(1, 365 * 24 * 3600), DEFAULT_TTL_SECS)
    .action(
      action((ctx, cmd) => {
        const options = cmd.opts<TokenOptions>();
        const token = signToken({ tenant: options.tenant, sub: options.sub, role: options.role }, loadConfig(ctx.io.env).jwtSecret, options.ttl);
        if (ctx.json) {
          const expiresAt = new Date(Date.now() + options.ttl * 1000).toISOString();
          ctx.printJson({ token, tenant: options.tenant, sub: options.sub, role: options.role, expiresAt });
        } else {
          ctx.line(token);
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
