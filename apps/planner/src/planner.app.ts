import { ProfileRegistry, defaultProfileRegistryOptions, startAgent, type Bus, type Component } from '@chorus/bus';
import type { ChorusConfig } from '@chorus/config';
import type { Logger } from '@chorus/observability';
import { PLANNER_AGENT } from './classification-result.handler';
import { PlannerModule } from './planner.module';

export async function startPlanner(bus: Bus, config: ChorusConfig, log: Logger): Promise<Component> {
  const registry = await ProfileRegistry.start(bus, defaultProfileRegistryOptions(), log.child({ agent: PLANNER_AGENT }));
  const module = PlannerModule.register({
    profiles: config.profiles,
    rrfK: config.search.rrfK,
    rankWindow: config.search.rankWindow,
    rrfWeights: config.search.rrfWeights,
    responderReserveMs: config.search.responderReserveMs,
  }, registry);
  const agent = await startAgent(PLANNER_AGENT, module, {
    bus,
    consumer: { ...config.consumer, agent: PLANNER_AGENT },
    log: log.child({ agent: PLANNER_AGENT }),
  });
  return {
    name: PLANNER_AGENT,
    close: async () => {
      await agent.close();
      registry.close();
    },
  };
}
