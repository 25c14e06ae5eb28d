import { startAgent, type Bus, type Component } from '@chorus/bus';
import type { ChorusConfig } from '@chorus/config';
import type { Logger } from '@chorus/observability';
import { IntentModule } from './intent.module';
import { INTENT_AGENT } from './query.handler';
import { createBusTypoCheck } from './typo.check';

export function startIntent(bus: Bus, config: ChorusConfig, log: Logger): Promise<Component> {
  const agentLog = log.child({ agent: INTENT_AGENT });
  return startAgent(INTENT_AGENT, IntentModule.register(createBusTypoCheck(bus, agentLog)), {
    bus,
    consumer: { ...config.consumer, agent: INTENT_AGENT },
    log: agentLog,
  });
}
