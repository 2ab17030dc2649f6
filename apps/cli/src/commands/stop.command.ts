import type { Command } from 'commander';
import type { Run } from '@parley/contracts';
import type { ActionFactory } from '../cli.context';
import { EXIT } from '../cli.errors';
import { formatActor } from '../format/interaction.format';

export function registerStopCommand(program: Command, action: ActionFactory): void {
  program
    .command('stop')
    .alias('cancel')
    .description('stop a run (and its sub-agents)')
    .argument('<run>', 'run id')
    .addHelpText(
      'after',
      [
        '',
        'A run that is parked or queued ends at once; a run a worker is advancing ends at its next step.',
        'A run that has already ended cannot be stopped (exit code 1).',
      ].join('\n'),
    )
    .action(
      action(async (ctx, cmd) => {
        const [runId] = cmd.processedArgs as [string];
        const run = await ctx.api().stopRun(runId);
        if (ctx.json) {
          ctx.printJson(run);
        } else {
          ctx.line(describeStop(run));
        }
        return EXIT.ok;
      }),
    );
}

/** "run r1 is cancelled, stopped by alice", or for a run a worker holds, that it ends at its next step. */
export function describeStop(run: Run): string {
  if (run.status !== 'cancelled') {
    return `run ${run.id} is ${run.status}; it stops at its next step`;
  }
  return run.stoppedBy === undefined ? `run ${run.id} is cancelled` : `run ${run.id} is cancelled, stopped by ${formatActor(run.stoppedBy)}`;
}
