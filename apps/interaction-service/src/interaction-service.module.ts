import { Module, type DynamicModule } from '@nestjs/common';
import { AgentCatalog } from '@parley/agents';
import type { ParleyConfig } from '@parley/platform';
import { StoreModule } from '@parley/store';
import { DeadlineProcessor } from './deadlines/deadline.processor';
import { InteractionRequestProcessor } from './interactions/interaction-request.processor';
import { ScheduleRegistrar } from './schedules/schedule.registrar';
import { SchedulesProcessor } from './schedules/schedules.processor';

@Module({})
export class InteractionServiceModule {
  static forRoot(config: ParleyConfig): DynamicModule {
    return {
      module: InteractionServiceModule,
      imports: [StoreModule.forRoot(config)],
      providers: [
        { provide: AgentCatalog, useFactory: () => AgentCatalog.fromConfig(config) },
        InteractionRequestProcessor,
        DeadlineProcessor,
        ScheduleRegistrar,
        SchedulesProcessor,
      ],
    };
  }
}
