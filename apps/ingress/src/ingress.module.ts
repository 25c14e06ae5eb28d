import { Module, type DynamicModule } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { Bus, ChorusClient } from '@chorus/bus';
import { AgentsController } from './agents.controller';
import { BusAvailableGuard } from './bus-available.guard';
import { EventsController } from './events.controller';
import { HealthController } from './health.controller';
import { INGRESS_OPTIONS, type IngressOptions } from './ingress.options';
import { QueriesController } from './queries.controller';
import { StatsController } from './stats.controller';
import { QueryParamsGuard } from './query-params.guard';
import { ApiKeys, TenantGuard } from './tenant.guard';
import { WorkflowsController } from './workflows.controller';

@Module({})
export class IngressModule {
  static register(bus: Bus, client: ChorusClient, options: IngressOptions): DynamicModule {
    return {
      module: IngressModule,
      controllers: [QueriesController, EventsController, WorkflowsController, StatsController, AgentsController, HealthController],
      providers: [
        { provide: Bus, useValue: bus },
        { provide: ChorusClient, useValue: client },
        { provide: INGRESS_OPTIONS, useValue: options },
        { provide: ApiKeys, useValue: new ApiKeys(options.apiKeys) },
        { provide: APP_GUARD, useClass: TenantGuard },
        { provide: APP_GUARD, useClass: QueryParamsGuard },
        { provide: APP_GUARD, useClass: BusAvailableGuard },
      ],
    };
  }
}
