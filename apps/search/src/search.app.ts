import { startAgent, type Bus, type Component } from '@chorus/bus';
import type { ChorusConfig } from '@chorus/config';
import type { Logger } from '@chorus/observability';
import { SEARCH_AGENT } from './execution-plan.handler';
import { SearchModule } from './search.module';

export function startSearch(bus: Bus, config: ChorusConfig, log: Logger): Promise<Component> {
  const module = SearchModule.register(bus, {
    profileTimeoutMs: config.search.profileTimeoutMs,
    documentChars: config.search.documentChars,
  });
  return startAgent(SEARCH_AGENT, module, {
    bus,
    consumer: { ...config.consumer, agent: SEARCH_AGENT },
    log: log.child({ agent: SEARCH_AGENT }),
  });
}
