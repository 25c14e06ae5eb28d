import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createRootLogger } from '@chorus/observability';
import { startNats, type NatsHandle } from '@chorus/testing';
import { Bus, ProfileRegistry, ServiceDirectory, defaultBusOptions, discoverServices } from '@chorus/bus';

const log = createRootLogger({ name: 'test', level: 'silent' });

/**
 * A service in a process of its own that registers for discovery, then, on `busy.<name>`, keeps
 * its event loop busy for that many milliseconds: a process with every core taken by work.
 */
const service = (name: string, metadata: Record<string, string>) => `
const { connect } = require('@nats-io/transport-node');
const { Svcm } = require('@nats-io/services');
(async () => {
  const nc = await connect({ servers: [process.env.NATS_URL] });
  await new Svcm(nc).add({ name: '${name}', version: '0.1.0', description: 'busy', metadata: ${JSON.stringify(metadata)} });
  nc.subscribe('busy.${name}', { callback: (_e, m) => { const until = Date.now() + Number(new TextDecoder().decode(m.data)); while (Date.now() < until); } });
  await nc.flush();
  console.log('ready');
})();
`;
const AGENT = service('chorus-agent-busy', { chorus_agent: 'true' });
const PROFILE = service('busy', { chorus_profile: 'true' });
const STEADY_PROFILE = service('steady', { chorus_profile: 'true' });

describe('discovery of busy, hung and dead services (ServiceDirectory, ProfileRegistry)', () => {
  let nats: NatsHandle;
  let bus: Bus;
  let child: ChildProcess | undefined;
  let profile: ChildProcess | undefined;
  let steady: ChildProcess | undefined;

  beforeAll(async () => {
    nats = await startNats();
    bus = await Bus.connect({ ...defaultBusOptions(), servers: [nats.url], name: 'test' }, log);
  });
  afterAll(async () => {
    child?.kill('SIGKILL');
    profile?.kill('SIGKILL');
    steady?.kill('SIGKILL');
    await bus?.close();
    await nats?.stop();
  });

  const busyInstances = (services: Awaited<ReturnType<typeof discoverServices>>) => services.find((s) => s.name === 'busy')?.instances.length;
  const start = async (script: string): Promise<ChildProcess> => {
    const c = spawn(process.execPath, ['-e', script], { env: { ...process.env, NATS_URL: nats.url }, cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] });
    await once(c.stdout!, 'data');
    return c;
  };
  /** Keeps the service's event loop busy for `ms`. */
  const busyFor = async (service: string, ms: number) => {
    bus.nc.publish(`busy.${service}`, new TextEncoder().encode(String(ms)));
    await bus.nc.flush();
  };
  const kill = async (c: ChildProcess) => {
    c.kill('SIGKILL');
    await once(c, 'exit');
  };

  it('ServiceDirectory - keeps an instance too busy to answer one discovery round, drops one that hangs after two silent rounds and one that died at once, still listing its name', async () => {
    child = await start(AGENT);
    const directory = new ServiceDirectory(bus);
    expect(busyInstances(await directory.discover())).toBe(1);

    // Busy for 700 ms: longer than a discovery round waits, shorter than the directory's ping.
    await busyFor('chorus-agent-busy', 700);
    const [plain, remembered] = await Promise.all([discoverServices(bus), directory.discover()]);
    expect(busyInstances(plain)).toBeUndefined();
    expect(busyInstances(remembered)).toBe(1);

    // Hangs (its subscriptions stay, it answers nothing): kept through one silent round, dropped at
    // the second, as the search worker's ProfileRegistry does. Two readers at once share one round.
    child.kill('SIGSTOP');
    const [first, second] = await Promise.all([directory.discover(), directory.discover()]);
    expect([busyInstances(first), busyInstances(second)]).toEqual([1, 1]);
    expect(busyInstances(await directory.discover())).toBe(0);
    await kill(child);

    child = await start(AGENT);
    expect(busyInstances(await directory.discover())).toBe(1);
    await kill(child);
    const started = Date.now();
    expect(busyInstances(await directory.discover())).toBe(0);
    expect(Date.now() - started).toBeLessThan(900);
  });

  it('ServiceDirectory - drops a hung replica after two silent rounds while another replica of the same service answers', async () => {
    const live = await start(AGENT);
    const hung = await start(AGENT);
    try {
      const directory = new ServiceDirectory(bus);
      expect(busyInstances(await directory.discover())).toBe(2);
      hung.kill('SIGSTOP');
      // Kept through one silent round, as when it is the only replica.
      expect(busyInstances(await directory.discover())).toBe(2);
      // Dropped at the second: before, it joined the live replica's list and its silent rounds were
      // reset, so it was listed (and pinged, a second each round) for as long as it hung.
      expect(busyInstances(await directory.discover())).toBe(1);
      const started = Date.now();
      expect(busyInstances(await directory.discover())).toBe(1);
      expect(Date.now() - started).toBeLessThan(900);
    } finally {
      hung.kill('SIGKILL');
      live.kill('SIGKILL');
    }
  });

  it('ProfileRegistry - keeps a profile too busy to answer refresh after refresh, drops one that died at once and one that hangs after two silent refreshes', async () => {
    // Another profile that stays: discovery rounds always have an answer.
    steady = await start(STEADY_PROFILE);
    profile = await start(PROFILE);
    // Refreshed by hand only.
    const registry = await ProfileRegistry.start(bus, { refreshMs: 3_600_000, collectMs: 500, confirmMs: 1000 }, log);
    try {
      expect(registry.has('busy')).toBe(true);
      // Busy through two refreshes in a row, each longer than a refresh waits for answers.
      for (let round = 0; round < 2; round++) {
        await busyFor('busy', 700);
        await registry.refresh();
        expect(registry.has('busy')).toBe(true);
      }

      // Hangs: its subscriptions stay, it answers nothing.
      profile.kill('SIGSTOP');
      await registry.refresh();
      expect(registry.has('busy')).toBe(true);
      await registry.refresh();
      expect(registry.has('busy')).toBe(false);
      await kill(profile);

      profile = await start(PROFILE);
      await registry.refresh();
      expect(registry.has('busy')).toBe(true);
      await kill(profile);
      // Dead: nobody serves its ping subject, so it is dropped by the first refresh, without waiting out the ping.
      const started = Date.now();
      await registry.refresh();
      expect({ busy: registry.has('busy'), steady: registry.has('steady') }).toEqual({ busy: false, steady: true });
      expect(Date.now() - started).toBeLessThan(1500);

      // The last profile of all dies: a round nobody answers empties the registry.
      await kill(steady);
      await registry.refresh();
      expect(registry.available()).toEqual([]);
    } finally {
      registry.close();
    }
  });
});
