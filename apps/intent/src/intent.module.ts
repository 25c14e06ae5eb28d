import { Module, type DynamicModule } from '@nestjs/common';
import { INTENT_TYPO_CHECK, QueryHandler } from './query.handler';
import type { TypoCheck } from './typo.check';

@Module({})
export class IntentModule {
  static register(typos: TypoCheck): DynamicModule {
    return {
      module: IntentModule,
      controllers: [QueryHandler],
      providers: [{ provide: INTENT_TYPO_CHECK, useValue: typos }],
    };
  }
}
