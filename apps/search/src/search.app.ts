import { ProfileRegistry, defaultProfileRegistryOptions, startAgent, type Bus, type Component } from '@chorus/bus';
import type { ChorusConfig } from '@chorus/config';
import type { Logger } from '@chorus/observability';
import { SEARCH_AGENT } from './execution-plan.handler';
import { SearchModule } from './search.module';

export async function startSearch(bus: Bus, config: ChorusConfig, log: Logger): Promise<Component> {
  const registry = await ProfileRegistry.start(bus, defaultProfileRegistryOptions(), log.child({ agent: SEARCH_AGENT }));
  const module = SearchModule.register(bus, registry, {
    profileTimeoutMs: config.search.profileTimeoutMs,
    profileHedgeMs: config.search.profileHedgeMs,
    leadDocuments: config.search.leadDocuments,
    documentChars: config.search.documentChars,
    passageChars: config.search.passageChars,
    profiles: config.profiles,
  });
  const agent = await startAgent(SEARCH_AGENT, module, {
    bus,
    consumer: { ...config.consumer, agent: SEARCH_AGENT },
    log: log.child({ agent: SEARCH_AGENT }),
  });
  return {
    name: SEARCH_AGENT,
    close: async () => {
      await agent.close();
      registry.close();
    },
  };
}
