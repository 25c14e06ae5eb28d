import { Svcm, type ServiceInfo, type ServiceStats } from '@nats-io/services';
import type { Logger } from '@chorus/observability';
import type { Bus } from './nats.bus';
import { PROFILE_METADATA_KEY } from './profile.registry';

/** Metadata of the NATS service every agent process registers, so it can be discovered and pinged. */
export const AGENT_METADATA_KEY = 'chorus_agent';

export interface DiscoveredService {
  name: string;
  kind: 'agent' | 'profile';
  description: string;
  metadata: Record<string, string>;
  instances: Array<{ id: string; version: string; started: string | null; requests: number; errors: number; average_ms: number | null }>;
}

/**
 * Every Chorus agent and profile that answers `$SRV.INFO` and `$SRV.STATS` right now, with its
 * instances and their request statistics.
 */
export async function discoverServices(bus: Bus, waitMs = 250): Promise<DiscoveredService[]> {
  const client = new Svcm(bus.nc).client({ strategy: 'stall', stall: 30, maxWait: waitMs });
  const [infos, stats] = await Promise.all([collect<ServiceInfo>(client.info()), collect<ServiceStats>(client.stats())]);
  const statsById = new Map(stats.map((s) => [s.id, s]));
  const byName = new Map<string, DiscoveredService>();
  for (const info of infos) {
    const kind = info.metadata?.[PROFILE_METADATA_KEY] === 'true' ? 'profile' : info.metadata?.[AGENT_METADATA_KEY] === 'true' ? 'agent' : null;
    if (!kind) continue;
    const name = kind === 'agent' ? info.name.replace(/^chorus-agent-/, '') : info.name;
    const entry = byName.get(`${kind}:${name}`) ?? { name, kind, description: info.description, metadata: info.metadata ?? {}, instances: [] };
    const s = statsById.get(info.id);
    const requests = s?.endpoints?.reduce((a, e) => a + e.num_requests, 0) ?? 0;
    const processing = s?.endpoints?.reduce((a, e) => a + e.processing_time, 0) ?? 0;
    entry.instances.push({
      id: info.id,
      version: info.version,
      started: s?.started ?? null,
      requests,
      errors: s?.endpoints?.reduce((a, e) => a + e.num_errors, 0) ?? 0,
      // Services report processing time in nanoseconds.
      average_ms: requests > 0 ? processing / requests / 1e6 : null,
    });
    byName.set(`${kind}:${name}`, entry);
  }
  return [...byName.values()].sort((a, b) => a.kind.localeCompare(b.kind) || a.name.localeCompare(b.name));
}

async function collect<T>(iterator: Promise<AsyncIterable<T>>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of await iterator) out.push(item);
  return out;
}

/**
 * Registers this process's agent as a NATS service with no endpoints: `$SRV.PING|INFO|STATS` then
 * find it, which is how `GET /v1/agents` counts instances and tells which are up.
 */
export async function registerAgentService(
  bus: Bus,
  agent: string,
  metadata: Record<string, string>,
  log: Logger,
): Promise<{ stop(): Promise<void> }> {
  const service = await new Svcm(bus.nc).add({
    name: `chorus-agent-${agent}`,
    version: '0.1.0',
    description: `Chorus ${agent} agent`,
    metadata: { ...metadata, [AGENT_METADATA_KEY]: 'true' },
  });
  log.debug({ agent, id: service.info().id }, 'agent registered for discovery');
  return {
    stop: async () => {
      await service.stop();
    },
  };
}
