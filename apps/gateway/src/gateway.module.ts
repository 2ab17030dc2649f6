import { Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { DeclaredInputsGuard } from './http/declared-inputs.guard';
import { StoreReadyGuard } from './http/store-ready.guard';
import { RolesGuard } from './auth/roles';
import { AgentCatalog, TenantAgents } from '@parley/agents';
import type { ParleyConfig } from '@parley/platform';
import { AgentRepository, ParleyStore, StoreModule, serviceOpsProvider, type OpsPort } from '@parley/store';
import { AgentsController } from './agents/agents.controller';
import { AgentsService } from './agents/agents.service';
import { ApprovalsController } from './approvals/approvals.controller';
import { AuthGuard } from './auth/auth.guard';
import { AuthService } from './auth/auth.service';
import { EventFeed } from './events/event.feed';
import { EventsGateway } from './events/events.gateway';
import { HealthController } from './health/health.controller';
import { ErrorFilter } from './http/error.filter';
import { InteractionsController } from './interactions/interactions.controller';
import { InteractionsService } from './interactions/interactions.service';
import { OpenInteractionCache } from './interactions/open-interaction.cache';
import { RunsController } from './runs/runs.controller';
import { RunsService } from './runs/runs.service';
import { SchedulesController } from './schedules/schedules.controller';
import { OperatorController } from './operator/operator.controller';
import { OperatorGuard } from './operator/operator.guard';
import { OperatorService } from './operator/operator.service';
import { WebhooksModule } from './webhooks/webhooks.module';

@Module({})
export class GatewayModule {
  static forRoot(config: ParleyConfig, ops?: OpsPort): DynamicModule {
    return {
      module: GatewayModule,
      imports: [StoreModule.forRoot(config, { commandTimeoutMs: config.redisCommandTimeoutMs }), WebhooksModule.forRoot(config)],
      controllers: [HealthController, AgentsController, RunsController, InteractionsController, ApprovalsController, SchedulesController, OperatorController],
      providers: [
        { provide: AgentCatalog, useFactory: () => AgentCatalog.fromConfig(config) },
        { provide: TenantAgents, inject: [AgentCatalog, ParleyStore], useFactory: (catalog: AgentCatalog, store: ParleyStore) => new TenantAgents(catalog, new AgentRepository(store.ctx)) },
        AgentsService,
        OperatorService,
        OperatorGuard,
        // In this order: who calls, whether the route is theirs to call, then what they sent.
        // First: while Redis is away nothing else of a request runs (the auth guard reads Redis too).
        { provide: APP_GUARD, useClass: StoreReadyGuard },
        { provide: APP_GUARD, useClass: AuthGuard },
        { provide: APP_GUARD, useClass: RolesGuard },
        { provide: APP_GUARD, useClass: DeclaredInputsGuard },
        { provide: APP_FILTER, useClass: ErrorFilter },
        AuthService,
        RunsService,
        InteractionsService,
        OpenInteractionCache,
        EventFeed,
        EventsGateway,
        serviceOpsProvider('gateway', [], ops),
      ],
    };
  }
}
