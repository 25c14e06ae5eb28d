import { runProcess, type Bus, type Component } from '@chorus/bus';
import { ALL_APPS, type ChorusConfig } from '@chorus/config';
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
  const starters: Array<{ name: string; start: (bus: Bus) => Promise<Component> }> = [
    { name: 'profiles', start: (bus) => startProfiles(bus, config, log) },
    { name: 'hub', start: (bus) => startHub(bus, config, log) },
    { name: 'intent', start: (bus) => startIntent(bus, config, log) },
    { name: 'planner', start: (bus) => startPlanner(bus, config, log) },
    { name: 'search', start: (bus) => startSearch(bus, config, log) },
    { name: 'responder', start: (bus) => startResponder(bus, config, log) },
    { name: 'ingress', start: async (bus) => (ingress = await startIngress(bus, config, log)) },
  ];
  const wanted = options.apps ?? (config.apps as ChorusApp[]);
  const running = await runProcess(
    log,
    config.bus,
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
