import { Option, type Command } from 'commander';
import { RunStatusSchema, type RunStatus } from '@parley/contracts';
import type { ActionFactory } from '../cli.context';
import { EXIT } from '../cli.errors';
import { formatRunsTable } from '../format/listing.format';
import { parseIntOption } from './option.parsers';

interface PsOptions {
  status?: RunStatus;
  limit?: number;
  after?: string;
}

export function registerPsCommand(program: Command, action: ActionFactory): void {
  program
    .command('ps')
    .description('list runs, most recent first')
    .addOption(new Option('--status <status>', 'only runs with this status').choices(RunStatusSchema.options))
    .option('--limit <n>', 'at most this many runs (1-500)', parseIntOption(1, 500))
    .option('--after <cursor>', 'the runs after the listing that printed this cursor')
    .action(
      action(async (ctx, cmd) => {
        const { status, limit, after } = cmd.opts<PsOptions>();
        const { runs, next } = await ctx.api().listRuns({ status, limit, after });
        if (ctx.json) {
          ctx.printJson(runs);
        } else if (runs.length === 0) {
          ctx.line(status === undefined ? 'no runs' : `no ${status} runs`);
        } else {
          ctx.write(formatRunsTable(runs, new Date()));
        }
        if (next !== null) {
          // On stderr, so that --json output stays one array.
          ctx.warn(`next page: parley ps --after ${next}${status === undefined ? '' : ` --status ${status}`}${limit === undefined ? '' : ` --limit ${limit}`}`);
        }
        return EXIT.ok;
      }),
    );
}
