import { Module, type DynamicModule } from '@nestjs/common';
import type { AnswerOptions } from './extractive.answer';
import { ANSWER_OPTIONS, ToolResultsHandler } from './tool-results.handler';

@Module({})
export class ResponderModule {
  static register(options: AnswerOptions): DynamicModule {
    return { module: ResponderModule, controllers: [ToolResultsHandler], providers: [{ provide: ANSWER_OPTIONS, useValue: options }] };
  }
}
