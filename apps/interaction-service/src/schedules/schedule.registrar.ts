import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { AgentCatalog } from '@parley/agents';
import { ParleyQueues } from '@parley/store';
import { wantedSchedules } from './wanted-schedules';

/**
 * Registers the catalog's schedules as BullMQ job schedulers at start and drops those no longer
 * configured. Every interaction-service process does it; upserting the same schedulers is a no-op.
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
