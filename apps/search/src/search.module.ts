import { Module, type DynamicModule } from '@nestjs/common';
import { ProfileClient, ProfileRegistry, type Bus } from '@chorus/bus';
import { Metrics } from '@chorus/observability';
import { ExecutionPlanHandler, SEARCH_OPTIONS, type SearchOptions } from './execution-plan.handler';

@Module({})
export class SearchModule {
  static register(bus: Bus, registry: ProfileRegistry, options: SearchOptions): DynamicModule {
    return {
      module: SearchModule,
      controllers: [ExecutionPlanHandler],
      providers: [
        { provide: ProfileClient, useValue: new ProfileClient(bus, { hedgeAfterMs: options.profileHedgeMs }) },
        { provide: ProfileRegistry, useValue: registry },
        { provide: SEARCH_OPTIONS, useValue: options },
        { provide: Metrics, useValue: bus.metrics },
      ],
    };
  }
}
