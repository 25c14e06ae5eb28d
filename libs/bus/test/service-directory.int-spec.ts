import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createRootLogger } from '@chorus/observability';
import { startNats, type NatsHandle } from '@chorus/testing';
import { Bus, ProfileRegistry, ServiceDirectory, defaultBusOptions, discoverServices } from '@chorus/bus';

const log = createRootLogger({ name: 'test', level: 'silent' });

/**
 * An agent in a process of its own that registers for discovery, then, on `busy.<name>`, keeps
 * its event loop busy for that many milliseconds: a process with every core taken by work.
 */
const service = (name: string, metadata: Record<string, string>) => `
const { connect } = require('@nats-io/transport-node');
const { Svcm } = require('@nats-io/services');
(async () => {
  const nc = await connect({ servers: [process.env.NATS_URL] });
  await new Svcm(nc).add({ name: '${name}', version: '0.1.0', description: 'busy', metadata: ${JSON.stringify(metadata)} });
  nc.subscribe('busy.now', { callback: (_e, m) => { const until = Date.now() + Number(new TextDecoder().decode(m.data)); while (Date.now() < until); } });
  await nc.flush();
  console.log('ready');
})();
`;
const AGENT = service('chorus-agent-busy', { chorus_agent: 'true' });
const PROFILE = service('busy', { chorus_profile: 'true' });

describe('discovery of busy, hung and dead services (ServiceDirectory, ProfileRegistry)', () => {
  let nats: NatsHandle;
  let bus: Bus;
  let child: ChildProcess | undefined;
  let profile: ChildProcess | undefined;

  beforeAll(async () => {
    nats = await startNats();
    bus = await Bus.connect({ ...defaultBusOptions(), servers: [nats.url], name: 'test' }, log);
  });
  afterAll(async () => {
    child?.kill('SIGKILL');
    profile?.kill('SIGKILL');
    await bus?.close();
    await nats?.stop();
  });

  const busyInstances = (services: Awaited<ReturnType<typeof discoverServices>>) => services.find((s) => s.name === 'busy')?.instances.length;

  it('ServiceDirectory - keeps an instance too busy to answer one discovery round, and drops one that died at once, still listing its name', async () => {
    child = spawn(process.execPath, ['-e', AGENT], { env: { ...process.env, NATS_URL: nats.url }, cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] });
    await once(child.stdout!, 'data');
    const directory = new ServiceDirectory(bus);
    expect(busyInstances(await directory.discover())).toBe(1);

    // Busy for 700 ms: longer than a discovery round waits, shorter than the directory's ping.
    bus.nc.publish('busy.now', new TextEncoder().encode('700'));
    await bus.nc.flush();
    const [plain, remembered] = await Promise.all([discoverServices(bus), directory.discover()]);
    expect(busyInstances(plain)).toBeUndefined();
    expect(busyInstances(remembered)).toBe(1);

    child.kill('SIGKILL');
    await once(child, 'exit');
    const started = Date.now();
    expect(busyInstances(await directory.discover())).toBe(0);
    expect(Date.now() - started).toBeLessThan(900);
  });

  const start = async (script: string): Promise<ChildProcess> => {
    const c = spawn(process.execPath, ['-e', script], { env: { ...process.env, NATS_URL: nats.url }, cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] });
    await once(c.stdout!, 'data');
    return c;
  };
  const busyFor = async (ms: number) => {
    bus.nc.publish('busy.now', new TextEncoder().encode(String(ms)));
    await bus.nc.flush();
  };

  it('ProfileRegistry - keeps a profile too busy to answer refresh after refresh, drops one that died at once and one that hangs after two silent refreshes', async () => {
    profile = await start(PROFILE);
    // Refreshed by hand only.
    const registry = await ProfileRegistry.start(bus, { refreshMs: 3_600_000, collectMs: 500, confirmMs: 1000 }, log);
    try {
      expect(registry.has('busy')).toBe(true);
      // Busy through two refreshes in a row, each longer than a refresh waits for answers.
      for (let round = 0; round < 2; round++) {
        await busyFor(700);
        await registry.refresh();
        expect(registry.has('busy')).toBe(true);
      }

      // Hangs: its subscriptions stay, it answers nothing.
      profile.kill('SIGSTOP');
      await registry.refresh();
      expect(registry.has('busy')).toBe(true);
      await registry.refresh();
      expect(registry.has('busy')).toBe(false);
      profile.kill('SIGKILL');
      await once(profile, 'exit');

      profile = await start(PROFILE);
      await registry.refresh();
      expect(registry.has('busy')).toBe(true);
      profile.kill('SIGKILL');
      await once(profile, 'exit');
      const started = Date.now();
      await registry.refresh();
      expect(registry.has('busy')).toBe(false);
      expect(Date.now() - started).toBeLessThan(900);
    } finally {
      registry.close();
    }
  });
});
