import { Module, type DynamicModule } from '@nestjs/common';
import { Bus, ChorusClient } from '@chorus/bus';
import { HealthController } from './health.controller';
import { INGRESS_OPTIONS, type IngressOptions } from './ingress.options';
import { QueriesController } from './queries.controller';
import { StatsController } from './stats.controller';
import { WorkflowsController } from './workflows.controller';

@Module({})
export class IngressModule {
  static register(bus: Bus, client: ChorusClient, options: IngressOptions): DynamicModule {
    return {
      module: IngressModule,
      controllers: [QueriesController, WorkflowsController, StatsController, HealthController],
      providers: [
        { provide: Bus, useValue: bus },
        { provide: ChorusClient, useValue: client },
        { provide: INGRESS_OPTIONS, useValue: options },
      ],
    };
  }
}
