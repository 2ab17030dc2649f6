import { Module, type DynamicModule } from '@nestjs/common';
import { AgentCatalog } from '@parley/agents';
import type { ParleyConfig } from '@parley/platform';
import { StoreModule, serviceOpsProvider, type OpsPort } from '@parley/store';
import { RunProcessor } from './run/run.processor';

@Module({})
export class LoopWorkerModule {
  static forRoot(config: ParleyConfig, ops?: OpsPort): DynamicModule {
    return {
      module: LoopWorkerModule,
      imports: [StoreModule.forRoot(config)],
      providers: [
        { provide: AgentCatalog, useFactory: () => AgentCatalog.fromConfig(config) },
        RunProcessor,
        serviceOpsProvider('loop-worker', [RunProcessor], ops),
      ],
    };
  }
}
