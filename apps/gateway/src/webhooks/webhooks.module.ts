import { Module, type DynamicModule } from '@nestjs/common';
import type { ParleyConfig } from '@parley/platform';
import { WebhookStoreModule } from '@parley/store';
import { WebhooksController } from './webhooks.controller';
import { WebhooksService } from './webhooks.service';

/** The webhook endpoints API (/v1/webhooks). */
@Module({})
export class WebhooksModule {
  static forRoot(config: ParleyConfig): DynamicModule {
    return {
      module: WebhooksModule,
      imports: [WebhookStoreModule.forRoot(config)],
      controllers: [WebhooksController],
      providers: [WebhooksService],
    };
  }
}
