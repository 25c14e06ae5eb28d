import { Svcm, type ServiceInfo, type ServiceStats } from '@nats-io/services';
import { unbound, type Logger } from '@chorus/observability';
import type { Bus } from './nats.bus';
import { PROFILE_METADATA_KEY } from './profile.registry';
import { isNoResponders } from './request-reply';
import { afterPing, pingInstance } from './srv.ping';

/** Metadata of the NATS service every agent process registers, so it can be discovered and pinged. */
export const AGENT_METADATA_KEY = 'chorus_agent';

export interface DiscoveredService {
  name: string;
  /** Its NATS service name (`chorus-agent-<name>` for an agent). */
  service: string;
  kind: 'agent' | 'profile';
  description: string;
  metadata: Record<string, string>;
  instances: Array<{ id: string; version: string; started: string | null; requests: number; errors: number; average_ms: number | null; metadata: Record<string, string> }>;
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
    const entry = byName.get(`${kind}:${name}`) ?? { name, service: info.name, kind, description: info.description, metadata: info.metadata ?? {}, instances: [] };
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
      // Each instance's own: replicas of one name may have been started differently (another corpus).
      metadata: info.metadata ?? {},
    });
    byName.set(`${kind}:${name}`, entry);
  }
  return [...byName.values()].sort((a, b) => a.kind.localeCompare(b.kind) || a.name.localeCompare(b.name));
}

type Instance = DiscoveredService['instances'][number];

interface KnownInstance {
  service: Omit<DiscoveredService, 'instances'>;
  instance: Instance;
  /** Rounds in a row it missed and then did not answer its own ping either. */
  silent: number;
}

export interface ServiceDirectoryOptions {
  /** How long a known instance that missed a discovery round gets to answer its own ping. */
  confirmTimeoutMs: number;
  /** How long a service with no instance left is still listed (with none). */
  forgetAfterMs: number;
}

/**
 * {@link discoverServices} with a memory. One discovery round collects the answers that come in
 * quickly, so a process busy with work (every core taken) can answer too late and look dead. An
 * instance seen before that misses a round is pinged on its own subject
 * (`$SRV.PING.<service>.<id>`) with a longer timeout: a live, busy one answers and is kept (with
 * its last statistics); a dead one has no subscription left, so NATS says so at once, and it is
 * dropped; one that does not answer its ping either is kept once more and dropped when it is
 * silent a second round in a row (a hung process), the rule ProfileRegistry applies to its
 * refreshes. The directory's rounds are not timed: each is a `GET /v1/agents` (the dashboard polls
 * it), so how long a hung instance stays listed depends on how often it is asked. A kept instance
 * shows the statistics of the last round it answered. Names seen before
 * are remembered for an hour, so a service whose every instance died is still listed, with none.
 */
export class ServiceDirectory {
  private readonly known = new Map<string, KnownInstance>();
  private readonly names = new Map<string, { service: Omit<DiscoveredService, 'instances'>; seenAt: number }>();
  private round?: Promise<DiscoveredService[]>;

  constructor(
    private readonly bus: Bus,
    private readonly options: ServiceDirectoryOptions = { confirmTimeoutMs: 1000, forgetAfterMs: 3_600_000 },
  ) {}

  /**
   * One discovery round. Rounds run one at a time: callers that ask while one is under way share
   * its answer (so two readers at once do not count one silence twice).
   */
  discover(): Promise<DiscoveredService[]> {
    this.round ??= this.discoverOnce().finally(() => (this.round = undefined));
    return this.round;
  }

  private async discoverOnce(): Promise<DiscoveredService[]> {
    const found = await discoverServices(this.bus);
    const seen = new Set(found.flatMap((s) => s.instances.map((i) => i.id)));
    const missed = [...this.known.values()].filter((k) => !seen.has(k.instance.id));
    const outcomes = await Promise.all(missed.map((k) => pingInstance(this.bus, k.service.service, k.instance.id, this.options.confirmTimeoutMs)));
    // The instances that answered this round, remembered before a kept one joins their service's
    // list below: a kept (silent) instance counted among them had its silent rounds reset, and a hung
    // replica beside a live one was listed for ever (each round also waited out its ping).
    for (const s of found) {
      const { instances, ...service } = s;
      for (const instance of instances) this.known.set(instance.id, { service, instance, silent: 0 });
    }
    const byKey = new Map(found.map((s) => [`${s.kind}:${s.name}`, s]));
    missed.forEach((k, i) => {
      const silent = afterPing(outcomes[i], k.silent);
      if (silent === 'drop') {
        this.known.delete(k.instance.id);
        return;
      }
      k.silent = silent;
      const key = `${k.service.kind}:${k.service.name}`;
      const entry = byKey.get(key) ?? { ...k.service, instances: [] };
      entry.instances.push(k.instance);
      byKey.set(key, entry);
    });
    const now = Date.now();
    for (const [key, { instances, ...service }] of byKey) if (instances.length > 0) this.names.set(key, { service, seenAt: now });
    for (const [key, { service, seenAt }] of this.names) {
      if (now - seenAt > this.options.forgetAfterMs) this.names.delete(key);
      else if (!byKey.has(key)) byKey.set(key, { ...service, instances: [] });
    }
    return [...byKey.values()].sort((a, b) => a.kind.localeCompare(b.kind) || a.name.localeCompare(b.name));
  }
}

/** The answers of one round; none when no service runs at all (NATS says there are no responders). */
async function collect<T>(iterator: Promise<AsyncIterable<T>>): Promise<T[]> {
  const out: T[] = [];
  try {
    for await (const item of await iterator) out.push(item);
  } catch (e) {
    if (isNoResponders(e)) return out;
    throw e;
  }
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
  log.debug({ ...unbound(log, { agent }), id: service.info().id }, 'agent registered for discovery');
  return {
    stop: async () => {
      await service.stop();
    },
  };
}
