import type { Command } from 'commander';
import type { ActionFactory } from '../cli.context';
import { EXIT } from '../cli.errors';
import { formatSchedulesTable } from '../format/listing.format';

export function registerSchedulesCommand(program: Command, action: ActionFactory): void {
  program
    .command('schedules')
    .description("list the agents' cron schedules and when each fires next")
    .addHelpText('after', '\nRuns a schedule starts are unattended: the agent cannot ask, and tool approvals follow its policy.')
    .action(
      action(async (ctx) => {
        const schedules = await ctx.api().listSchedules();
        if (ctx.json) {
          ctx.printJson(schedules);
        } else if (schedules.length === 0) {
          ctx.line('no schedules');
        } else {
          ctx.write(formatSchedulesTable(schedules, new Date()));
        }
        return EXIT.ok;
      }),
    );
}
