import { Svcm, type ServiceClient, type ServiceInfo, type ServiceStats } from '@nats-io/services';
import type { Logger } from '@chorus/observability';
import type { Bus } from './nats.bus';
import { isNoResponders } from './request-reply';
import { afterPing, pingInstance } from './srv.ping';

/** Metadata every Chorus profile service carries, so discovery ignores other NATS services. */
export const PROFILE_METADATA_KEY = 'chorus_profile';
/** Profiles announce themselves here when they start, so a registry learns of them at once. */
export const PROFILE_ANNOUNCE_SUBJECT = 'chorus.profile.announce';

export interface ProfileInstance {
  id: string;
  version: string;
}

export interface ProfileEntry {
  name: string;
  description: string;
  metadata: Record<string, string>;
  instances: ProfileInstance[];
}

/** What a profile service publishes on `chorus.profile.announce` when it starts. */
export interface ProfileAnnouncement {
  name: string;
  id: string;
  version?: string;
  description?: string;
}

export interface ProfileRegistryOptions {
  /** How often the registry asks every service for its info. */
  refreshMs: number;
  /** How long one refresh collects replies. */
  collectMs: number;
  /** How long an instance known before that missed a refresh gets to answer a ping of its own. */
  confirmMs: number;
}

export function defaultProfileRegistryOptions(): ProfileRegistryOptions {
  return { refreshMs: 1000, collectMs: 500, confirmMs: 1000 };
}

/**
 * The profiles that exist and how many instances answer, from `$SRV.INFO`, reconciled continuously:
 * a profile that starts is known at once (it announces itself), one that dies drops out at the next
 * refresh, or as soon as a request to it finds no responders. Built fully (one refresh) before use.
 *
 * A refresh only waits for the answers that come in quickly, so an instance known before that
 * misses one is pinged on its own subject (see {@link pingInstance}): it is kept if it answers,
 * dropped at once if nobody serves its subject any more (it died), and dropped after a second
 * silent refresh otherwise (it hangs). A busy profile is never forgotten for being busy: when the
 * registry forgot one after two slow rounds, a whole second of queries went without its lens.
 */
export class ProfileRegistry {
  private entries = new Map<string, ProfileEntry>();
  /** Instance id → refreshes in a row it missed and did not answer its ping either. */
  private readonly silent = new Map<string, number>();
  /** Profile name → when a request to it last found no responders. */
  private readonly removedAt = new Map<string, number>();
  private timer?: NodeJS.Timeout;
  private refreshing?: Promise<void>;
  private readonly client: ServiceClient;
  private closed = false;

  private constructor(
    private readonly bus: Bus,
    private readonly options: ProfileRegistryOptions,
    private readonly log: Logger,
  ) {
    // Stop collecting once replies stall: an instance that misses the cut-off is pinged on its own.
    this.client = new Svcm(bus.nc).client({ strategy: 'stall', stall: 100, maxWait: options.collectMs });
  }

  static async start(bus: Bus, options: ProfileRegistryOptions, log: Logger): Promise<ProfileRegistry> {
    const registry = new ProfileRegistry(bus, options, log);
    // Listen before the first refresh: a profile that announces itself while the refresh collects
    // replies (or just after) would otherwise stay unknown until the next one.
    const announcements = bus.nc.subscribe(PROFILE_ANNOUNCE_SUBJECT, {
      callback: (_e, m) => {
        try {
          registry.announce(m.json<ProfileAnnouncement>());
        } catch {
          // Not an announcement we understand; the next refresh sees the service anyway.
        }
        void registry.refresh();
      },
    });
    await bus.nc.flush();
    await registry.refresh();
    const loop = () => {
      registry.timer = setTimeout(() => {
        void registry.refresh().finally(() => !registry.closed && loop());
      }, options.refreshMs);
      registry.timer.unref();
    };
    loop();
    registry.closeSubscription = () => announcements.unsubscribe();
    return registry;
  }

  private closeSubscription: () => void = () => undefined;

  /** Names of the profiles with at least one instance, sorted. */
  available(): string[] {
    return [...this.entries.keys()].sort();
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  get(name: string): ProfileEntry | undefined {
    return this.entries.get(name);
  }

  snapshot(): ProfileEntry[] {
    return this.available().map((n) => this.entries.get(n)!);
  }

  /** A profile that just started: usable by the next plan, before the next refresh confirms it. */
  private announce(a: ProfileAnnouncement): void {
    if (typeof a?.name !== 'string' || typeof a.id !== 'string') return;
    const entry = this.entries.get(a.name) ?? { name: a.name, description: a.description ?? '', metadata: {}, instances: [] };
    if (!entry.instances.some((i) => i.id === a.id)) entry.instances.push({ id: a.id, version: a.version ?? '' });
    this.entries.set(a.name, entry);
  }

  /** A request found nobody serving the profile: forget it until it shows up again. */
  markUnavailable(name: string): void {
    this.removedAt.set(name, Date.now());
    for (const i of this.entries.get(name)?.instances ?? []) this.silent.delete(i.id);
    if (this.entries.delete(name)) this.log.warn({ profile: name }, 'profile has no responders; removed from the registry');
  }

  /** Live request statistics of every instance of every profile (`$SRV.STATS`). */
  async stats(): Promise<ServiceStats[]> {
    const out: ServiceStats[] = [];
    for await (const s of await this.client.stats()) {
      if (this.entries.has(s.name)) out.push(s);
    }
    return out;
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.closeSubscription();
  }

  /** One round of `$SRV.INFO`; concurrent calls share it. */
  refresh(): Promise<void> {
    this.refreshing ??= this.collect().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  private async collect(): Promise<void> {
    const startedAt = Date.now();
    const found = new Map<string, ProfileEntry>();
    const keep = (entry: ProfileEntry, instance: ProfileInstance) => {
      const kept = found.get(entry.name) ?? { ...entry, instances: [] };
      if (!kept.instances.some((i) => i.id === instance.id)) kept.instances.push(instance);
      found.set(entry.name, kept);
    };
    try {
      for await (const info of (await this.client.info()) as AsyncIterable<ServiceInfo>) {
        if (info.metadata?.[PROFILE_METADATA_KEY] !== 'true') continue;
        keep({ name: info.name, description: info.description, metadata: info.metadata ?? {}, instances: [] }, { id: info.id, version: info.version });
      }
    } catch (e) {
      // No responders: not one service runs (the last profile died), an empty round, not a failure.
      if (!isNoResponders(e)) {
        if (!this.closed) this.log.warn({ err: e }, 'profile discovery failed; keeping the last view');
        return;
      }
    }
    const missing = [...this.entries.values()].flatMap((entry) =>
      entry.instances.filter((i) => !found.get(entry.name)?.instances.some((f) => f.id === i.id)).map((instance) => ({ entry, instance })),
    );
    for (const entry of found.values()) for (const i of entry.instances) this.silent.delete(i.id);
    const outcomes = await Promise.all(missing.map(({ entry, instance }) => pingInstance(this.bus, entry.name, instance.id, this.options.confirmMs)));
    missing.forEach(({ entry, instance }, i) => {
      const silent = afterPing(outcomes[i], this.silent.get(instance.id) ?? 0);
      if (silent === 'drop' || silent === 0) this.silent.delete(instance.id);
      else this.silent.set(instance.id, silent);
      if (silent !== 'drop') keep(entry, instance);
    });
    if (this.closed) return;
    // Announced while this refresh ran: confirmed by the next one.
    const asked = new Set(missing.map((m) => m.instance.id));
    for (const entry of this.entries.values()) for (const i of entry.instances) if (!asked.has(i.id)) keep(entry, i);
    // A request found no responders while this refresh ran: what the refresh saw before is older.
    // The next refresh brings the profile back if it does run.
    for (const [name, at] of this.removedAt) {
      if (at >= startedAt) found.delete(name);
      else this.removedAt.delete(name);
    }
    const before = this.available().join(',');
    this.entries = found;
    const after = this.available().join(',');
    if (before !== after) this.log.info({ profiles: this.snapshot().map((e) => `${e.name}×${e.instances.length}`) }, 'profiles changed');
  }
}
