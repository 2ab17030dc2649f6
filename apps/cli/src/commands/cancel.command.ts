import type { Command } from 'commander';
import type { ActionFactory } from '../cli.context';
import { EXIT } from '../cli.errors';

export function registerCancelCommand(program: Command, action: ActionFactory): void {
  program
    .command('cancel')
    .description('cancel a run')
    .argument('<run>', 'run id')
    .action(
      action(async (ctx, cmd) => {
        const [runId] = cmd.processedArgs as [string];
        const run = await ctx.api().cancelRun(runId);
        if (ctx.json) {
          ctx.printJson(run);
        } else {
          ctx.line(`run ${run.id} is ${run.status}`);
        }
        return EXIT.ok;
      }),
    );
}
