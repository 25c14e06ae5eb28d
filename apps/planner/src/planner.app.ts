import { ProfileRegistry, defaultProfileRegistryOptions, startAgent, type Bus, type Component } from '@chorus/bus';
import type { ChorusConfig } from '@chorus/config';
import type { Logger } from '@chorus/observability';
import { editDistanceWithin } from '@chorus/profiles';
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
  const check = setTimeout(() => warnUnserved(config.profiles, registry.available(), log.child({ agent: PLANNER_AGENT }), Object.keys(config.search.rrfWeights)), UNSERVED_CHECK_MS);
  check.unref();
  return {
    name: PLANNER_AGENT,
    close: async () => {
      clearTimeout(check);
      await agent.close();
      registry.close();
    },
  };
}

/** How long after its start the planner looks once for configured (or weighted) profiles that no instance serves. */
const UNSERVED_CHECK_MS = 30_000;

/**
 * A configured profile no instance serves is planned all the same (a lens lost until one starts),
 * so a misspelt CHORUS_PROFILES (`trigam`) cost a lens in every workflow that planned it, without a
 * word: said once, with the running profile it most likely meant.
 */
export function warnUnserved(configured: readonly string[], running: readonly string[], log: Logger, weighted: readonly string[] = []): void {
  const missing = configured.filter((name) => !running.includes(name));
  const meant = (names: readonly string[]) => names.map((name) => running.find((r) => editDistanceWithin(name, r, 2) <= 2)).map((r, i) => (r ? `${names[i]} (${r}?)` : names[i]));
  const ran = `(running: ${running.join(', ') || 'none'})`;
  if (missing.length > 0) {
    log.warn(
      { missing, running },
      `CHORUS_PROFILES names ${meant(missing).join(', ')}, which no instance serves ${UNSERVED_CHECK_MS / 1000} s after the planner started ${ran}; it is planned all the same and its lens is lost in every workflow that plans it`,
    );
  }
  // A weight for a profile neither configured nor running weighs nothing; the one meant keeps weight 1.
  const stray = weighted.filter((name) => !configured.includes(name) && !running.includes(name));
  if (stray.length > 0) {
    log.warn({ weighted: stray, running }, `CHORUS_RRF_WEIGHTS names ${meant(stray).join(', ')}, which is neither configured (CHORUS_PROFILES) nor running ${ran}: its weight applies to nothing`);
  }
}
