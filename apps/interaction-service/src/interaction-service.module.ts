import { Module, type DynamicModule } from '@nestjs/common';
import type { ParleyConfig } from '@parley/platform';
import { StoreModule } from '@parley/store';
import { DeadlineProcessor } from './deadlines/deadline.processor';
import { InteractionRequestProcessor } from './interactions/interaction-request.processor';

@Module({})
export class InteractionServiceModule {
  static forRoot(config: ParleyConfig): DynamicModule {
    return {
      module: InteractionServiceModule,
      imports: [StoreModule.forRoot(config)],
      providers: [InteractionRequestProcessor, DeadlineProcessor],
    };
  }
}
