import { Module, type DynamicModule } from '@nestjs/common';
import { EnvelopeHandler } from './envelope.handler';
import { HubService } from './hub.service';

@Module({})
export class HubModule {
  static register(hub: HubService): DynamicModule {
    return { module: HubModule, controllers: [EnvelopeHandler], providers: [{ provide: HubService, useValue: hub }] };
  }
}
