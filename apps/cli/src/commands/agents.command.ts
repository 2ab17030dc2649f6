import type { Command } from 'commander';
import type { ActionFactory } from '../cli.context';
import { EXIT } from '../cli.errors';
import { formatAgentsTable } from '../format/listing.format';

export function registerAgentsCommand(program: Command, action: ActionFactory): void {
  program
    .command('agents')
    .description('list the agents a run can be started with')
    .action(
      action(async (ctx) => {
        const agents = await ctx.api().listAgents();
        if (ctx.json) {
          ctx.printJson(agents);
        } else if (agents.length === 0) {
          ctx.line('no agents');
        } else {
          ctx.write(formatAgentsTable(agents));
        }
        return EXIT.ok;
      }),
    );
}
