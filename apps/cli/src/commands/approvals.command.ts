import type { Command } from 'commander';
import type { ActionFactory, CliContext } from '../cli.context';
import { EXIT, UsageError } from '../cli.errors';
import { formatClaim } from '../format/interaction.format';
import { formatApprovalsTable, formatSafeCommandsTable } from '../format/listing.format';
import { parseIntOption } from './option.parsers';

interface ApprovalsOptions {
  agent?: string;
  tool?: string;
  run?: string;
  limit?: number;
  after?: string;
  claim?: string;
  release?: string;
}

/** Options that only filter the listing (`safe` reads --agent from here too: commander hands parent options to the parent). */
const LISTING_FILTERS = [
  ['tool', '--tool'],
  ['run', '--run'],
  ['limit', '--limit'],
  ['after', '--after'],
] as const;

export function registerApprovalsCommand(program: Command, action: ActionFactory): void {
  const approvals = program
    .command('approvals')
    .description('list open tool approvals, claim or release one, or show the safe commands')
    .option('--agent <agent>', 'only approvals of this agent (with `safe`: the safe commands in effect for it)')
    .option('--tool <tool>', 'only approvals of calls to this tool')
    .option('--run <runId>', 'only approvals of this run')
    .option('--limit <n>', 'at most this many approvals (1-500)', parseIntOption(1, 500))
    .option('--after <cursor>', 'the page after the one that printed this cursor')
    .option('--claim <id>', 'take an open approval so only you may answer it for a while (admins)')
    .option('--release <id>', 'give up your claim on an approval')
    .addHelpText(
      'after',
      [
        '',
        'Answer an approval with: parley respond <id> --approve [--stage|--run] | --deny [--reason "..."]',
        'A claim lasts a few minutes; while it holds, only its holder can answer (others get "claimed by X until T").',
      ].join('\n'),
    )
    .action(
      action(async (ctx, cmd) => {
        const options = cmd.opts<ApprovalsOptions>();
        if (options.claim !== undefined && options.release !== undefined) {
          throw new UsageError('give either --claim or --release, not both');
        }
        if (options.claim !== undefined) {
          return changeClaim(ctx, options.claim, 'claim', options);
        }
        if (options.release !== undefined) {
          return changeClaim(ctx, options.release, 'release', options);
        }
        return listApprovals(ctx, options);
      }),
    );

  approvals
    .command('safe')
    .description('list the safe commands in effect (shell commands that run without asking), with where each comes from')
    .addHelpText('after', '\nWith --agent A, the commands in effect for that agent: the defaults, the global ones and its own.')
    .action(
      action(async (ctx, cmd) => {
        const options = cmd.optsWithGlobals<ApprovalsOptions>();
        const misplaced = [...LISTING_FILTERS, ['claim', '--claim'] as const, ['release', '--release'] as const]
          .filter(([key]) => options[key] !== undefined)
          .map(([, flag]) => flag);
        if (misplaced.length > 0) {
          throw new UsageError(`${misplaced.join(', ')} cannot be used with \`parley approvals safe\` (it takes only --agent)`);
        }
        const reply = await ctx.api().safeCommands(options.agent);
        if (ctx.json) {
          ctx.printJson(reply);
          return EXIT.ok;
        }
        ctx.line(reply.agent === null ? 'safe commands for every agent (add --agent A for the ones in effect for an agent):' : `safe commands for agent ${reply.agent}:`);
        if (reply.safeCommands.length === 0) {
          ctx.line('none');
        } else {
          ctx.write(formatSafeCommandsTable(reply.safeCommands));
        }
        return EXIT.ok;
      }),
    );
}

async function listApprovals(ctx: CliContext, options: ApprovalsOptions): Promise<number> {
  const { approvals, next } = await ctx.api().listApprovals({ agent: options.agent, tool: options.tool, runId: options.run, limit: options.limit, after: options.after });
  if (ctx.json) {
    ctx.printJson(approvals);
  } else if (approvals.length === 0) {
    ctx.line('no open approvals');
  } else {
    ctx.write(formatApprovalsTable(approvals, new Date()));
  }
  if (next !== null) {
    // On stderr, so that --json output stays one array.
    ctx.warn(`next page: parley approvals --after ${next} (with the same filters)`);
  }
  return EXIT.ok;
}

async function changeClaim(ctx: CliContext, id: string, change: 'claim' | 'release', options: ApprovalsOptions): Promise<number> {
  const filters = [['agent', '--agent'] as const, ...LISTING_FILTERS].filter(([key]) => options[key] !== undefined).map(([, flag]) => flag);
  if (filters.length > 0) {
    throw new UsageError(`${filters.join(', ')} only filter the listing; they cannot be used with --claim or --release`);
  }
  const api = ctx.api();
  const interaction = change === 'claim' ? await api.claimApproval(id) : await api.releaseApproval(id);
  if (ctx.json) {
    ctx.printJson(interaction);
  } else if (interaction.claim !== undefined) {
    ctx.line(`approval ${interaction.id} ${formatClaim(interaction.claim)}`);
  } else {
    ctx.line(`released approval ${interaction.id}`);
  }
  return EXIT.ok;
}
