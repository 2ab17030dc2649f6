import { Module, type DynamicModule } from '@nestjs/common';
import { AgentCatalog } from '@parley/agents';
import type { ParleyConfig } from '@parley/platform';
import { StoreModule, serviceOpsProvider, type OpsPort } from '@parley/store';
import { ClusterGaugesReporter } from './metrics/cluster-gauges.reporter';
import { DeadlineProcessor } from './deadlines/deadline.processor';
import { ScheduleRegistrar } from './schedules/schedule.registrar';
import { SchedulesProcessor } from './schedules/schedules.processor';
import { RunSweeper } from './sweeper/run.sweeper';
import { WebhookDeliveryProcessor } from './webhooks/webhook-delivery.processor';
import { WebhooksModule } from './webhooks/webhooks.module';

@Module({})
export class InteractionServiceModule {
  static forRoot(config: ParleyConfig, ops?: OpsPort): DynamicModule {
    return {
      module: InteractionServiceModule,
      imports: [StoreModule.forRoot(config), WebhooksModule.forRoot(config)],
      providers: [
        { provide: AgentCatalog, useFactory: () => AgentCatalog.fromConfig(config) },
        DeadlineProcessor,
        ScheduleRegistrar,
        SchedulesProcessor,
        ClusterGaugesReporter,
        RunSweeper,
        serviceOpsProvider('interaction-service', [DeadlineProcessor, SchedulesProcessor, WebhookDeliveryProcessor, RunSweeper], ops),
      ],
    };
  }
}
