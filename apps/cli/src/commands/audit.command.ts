import type { Command } from 'commander';
import type { ActionFactory } from '../cli.context';
import { EXIT } from '../cli.errors';
import { formatAuditTable } from '../format/listing.format';

export function registerAuditCommand(program: Command, action: ActionFactory): void {
  program
    .command('audit')
    .description("show who approved or denied a run's tool calls, and on what basis")
    .argument('<run>', 'run id')
    .addHelpText(
      'after',
      [
        '',
        'BASIS: person (an approver chose), deadline (nobody answered in time: denied), cancelled (the run stopped',
        'first: denied), grant or safe_command (let through without asking), policy (an unattended run: the',
        "agent's unattended_approval allowed or denied the call). DIGEST is the SHA-256 of the arguments",
        'approved (first 12 hex characters; --json has it whole).',
      ].join('\n'),
    )
    .action(
      action(async (ctx, cmd) => {
        const [runId] = cmd.processedArgs as [string];
        const entries = await ctx.api().getAudit(runId);
        if (ctx.json) {
          ctx.printJson(entries);
        } else if (entries.length === 0) {
          ctx.line(`no approval decisions in run ${runId}`);
        } else {
          ctx.write(formatAuditTable(entries));
        }
        return EXIT.ok;
      }),
    );
}
