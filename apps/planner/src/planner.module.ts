import { Module, type DynamicModule } from '@nestjs/common';
import { ClassificationResultHandler, PLANNER_OPTIONS, PLANNER_PROFILES, type AvailableProfiles } from './classification-result.handler';
import type { PlannerOptions } from './planner.rules';

@Module({})
export class PlannerModule {
  static register(options: PlannerOptions, profiles: AvailableProfiles): DynamicModule {
    return {
      module: PlannerModule,
      controllers: [ClassificationResultHandler],
      providers: [
        { provide: PLANNER_OPTIONS, useValue: options },
        { provide: PLANNER_PROFILES, useValue: profiles },
      ],
    };
  }
}
