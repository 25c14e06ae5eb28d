import { Module } from '@nestjs/common';
import { ToolResultsHandler } from './tool-results.handler';

@Module({ controllers: [ToolResultsHandler] })
export class ResponderModule {}
