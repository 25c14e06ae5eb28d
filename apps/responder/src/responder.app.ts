import { startAgent, type Bus, type Component } from '@chorus/bus';
import type { ChorusConfig } from '@chorus/config';
import type { Logger } from '@chorus/observability';
import { ResponderModule } from './responder.module';
import { RESPONDER_AGENT } from './tool-results.handler';

export function startResponder(bus: Bus, config: ChorusConfig, log: Logger): Promise<Component> {
  return startAgent(RESPONDER_AGENT, ResponderModule, {
    bus,
    consumer: { ...config.consumer, agent: RESPONDER_AGENT },
    log: log.child({ agent: RESPONDER_AGENT }),
  });
}
