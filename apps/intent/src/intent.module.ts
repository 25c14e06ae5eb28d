import { Module } from '@nestjs/common';
import { QueryHandler } from './query.handler';

@Module({ controllers: [QueryHandler] })
export class IntentModule {}
