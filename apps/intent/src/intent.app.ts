import { startAgent, type Bus, type Component } from '@chorus/bus';
import type { ChorusConfig } from '@chorus/config';
import type { Logger } from '@chorus/observability';
import { IntentModule } from './intent.module';
import { INTENT_AGENT } from './query.handler';

export function startIntent(bus: Bus, config: ChorusConfig, log: Logger): Promise<Component> {
  return startAgent(INTENT_AGENT, IntentModule, {
    bus,
    consumer: { ...config.consumer, agent: INTENT_AGENT },
    log: log.child({ agent: INTENT_AGENT }),
  });
}
