import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { AgentCatalog } from '@parley/agents';
import { ParleyQueues } from '@parley/store';
import { wantedSchedules } from './wanted-schedules';

/**
 * Registers the configured schedules as BullMQ job schedulers at start and drops those no longer
 * configured. Every interaction-service process does it; a scheduler registered as configured is
 * left alone, so a firing that fell due while the service was down still runs, late.
 */
@Injectable()
export class ScheduleRegistrar implements OnApplicationBootstrap {
  private readonly logger = new Logger(ScheduleRegistrar.name);

  constructor(
    private readonly agents: AgentCatalog,
    private readonly queues: ParleyQueues,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const failed = await this.queues.syncSchedules(wantedSchedules(this.agents));
    for (const { id, error } of failed) {
      this.logger.error(`schedule ${id} was not registered: ${error}`);
    }
  }
}
