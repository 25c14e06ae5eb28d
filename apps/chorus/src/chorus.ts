import { Bus, runProcess, type Component } from '@chorus/bus';
import { ALL_APPS, busOptionsFor, type ChorusConfig } from '@chorus/config';
import type { Logger } from '@chorus/observability';
import { startHub } from '../../hub/src';
import { startIngress, type IngressComponent } from '../../ingress/src';
import { startIntent } from '../../intent/src';
import { startPlanner } from '../../planner/src';
import { startProfiles } from '../../profile/src';
import { startResponder } from '../../responder/src';
import { startSearch } from '../../search/src';

export type ChorusApp = (typeof ALL_APPS)[number];

export interface RunningChorus {
  bus: Bus;
  /** Where the ingress listens, when it started. */
  url: string | undefined;
  components: Component[];
  failed: Array<{ name: string; error: unknown }>;
  shutdown(reason?: string): Promise<void>;
}

/**
 * Every app of Chorus in this process, on one NATS connection. The all-in-one launcher is the one
 * place that composes apps; each app's code is the same as when it runs as its own process.
 * Profiles, the hub and the agents start before the ingress, so the first query finds them ready.
 */
export async function startChorus(
  config: ChorusConfig,
  log: Logger,
  options: { exitOnSignal?: boolean; afterShutdown?: () => Promise<void>; apps?: readonly ChorusApp[] } = {},
): Promise<RunningChorus> {
  let ingress: IngressComponent | undefined;
  // With per-service NATS users, each app connects as itself (the shared connection is the hub's,
  // which administers the streams); otherwise they all share one connection.
  const own = (app: string, start: (bus: Bus) => Promise<Component>) => async (shared: Bus): Promise<Component> => {
    if (!config.credentials) return start(shared);
    const bus = await Bus.connect(busOptionsFor(config, app), log, { trackFinished: true, metrics: shared.metrics });
    try {
      const component = await start(bus);
      return {
        name: component.name,
        close: async () => {
          await component.close();
          await bus.close();
        },
      };
    } catch (e) {
      await bus.close();
      throw e;
    }
  };
  const starters: Array<{ name: string; start: (bus: Bus) => Promise<Component> }> = [
    { name: 'profiles', start: own('profiles', (bus) => startProfiles(bus, config, log)) },
    { name: 'hub', start: own('hub', (bus) => startHub(bus, config, log)) },
    { name: 'intent', start: own('intent', (bus) => startIntent(bus, config, log)) },
    { name: 'planner', start: own('planner', (bus) => startPlanner(bus, config, log)) },
    { name: 'search', start: own('search', (bus) => startSearch(bus, config, log)) },
    { name: 'responder', start: own('responder', (bus) => startResponder(bus, config, log)) },
    { name: 'ingress', start: own('ingress', async (bus) => (ingress = await startIngress(bus, config, log))) },
  ];
  const wanted = options.apps ?? (config.apps as ChorusApp[]);
  const running = await runProcess(
    log,
    config.credentials ? busOptionsFor(config, 'hub') : config.bus,
    starters.filter((s) => wanted.includes(s.name as ChorusApp)),
    options,
  );
  return {
    bus: running.bus,
    url: ingress?.url,
    components: running.components,
    failed: running.failed,
    shutdown: (reason = 'shutdown') => running.shutdown(reason),
  };
}
