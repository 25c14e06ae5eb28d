import { Module, type DynamicModule } from '@nestjs/common';
import { ClassificationResultHandler, PLANNER_OPTIONS } from './classification-result.handler';
import type { PlannerOptions } from './planner.rules';

@Module({})
export class PlannerModule {
  static register(options: PlannerOptions): DynamicModule {
    return {
      module: PlannerModule,
      controllers: [ClassificationResultHandler],
      providers: [{ provide: PLANNER_OPTIONS, useValue: options }],
    };
  }
}
