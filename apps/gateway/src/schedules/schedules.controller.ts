import { Controller, Get } from '@nestjs/common';
import { AgentCatalog } from '@parley/agents';
import { jobIds, type ScheduleInfo, type TokenClaims } from '@parley/contracts';
import { ParleyQueues } from '@parley/store';
import { User } from '../auth/user.decorator';
import { Roles } from '../auth/roles';

/** The agents' cron schedules of the caller's tenant, with when each fires next (admins and services). */
@Controller('v1/schedules')
export class SchedulesController {
  constructor(
    private readonly agents: AgentCatalog,
    private readonly queues: ParleyQueues,
  ) {}

  @Get()
  @Roles(['admin', 'service'], 'list schedules')
  async list(@User() user: TokenClaims): Promise<{ schedules: ScheduleInfo[] }> {
    const next = new Map((await this.queues.listSchedules()).map((registered) => [registered.id, registered.next]));
    // Every configured agent's: the gateway may lack a model's key that the loop-workers have.
    const schedules = this.agents
      .configured()
      .flatMap((agent) =>
        agent.schedules
          .filter((schedule) => schedule.tenant === user.tenant)
          .map((schedule): ScheduleInfo => {
            const at = next.get(jobIds.scheduler(agent.name, schedule.name));
            return {
              agent: agent.name,
              name: schedule.name,
              cron: schedule.cron,
              timezone: schedule.timezone,
              owner: schedule.owner,
              task: schedule.task,
              next: typeof at === 'number' ? new Date(at).toISOString() : null,
            };
          }),
      );
    return { schedules };
  }
}
