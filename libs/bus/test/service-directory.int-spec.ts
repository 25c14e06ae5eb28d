import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createRootLogger } from '@chorus/observability';
import { startNats, type NatsHandle } from '@chorus/testing';
import { Bus, ServiceDirectory, defaultBusOptions, discoverServices } from '@chorus/bus';

const log = createRootLogger({ name: 'test', level: 'silent' });

/**
 * An agent in a process of its own that registers for discovery, then, on `busy.<name>`, keeps
 * its event loop busy for that many milliseconds: a process with every core taken by work.
 */
const AGENT = `
const { connect } = require('@nats-io/transport-node');
const { Svcm } = require('@nats-io/services');
(async () => {
  const nc = await connect({ servers: [process.env.NATS_URL] });
  await new Svcm(nc).add({ name: 'chorus-agent-busy', version: '0.1.0', description: 'busy', metadata: { chorus_agent: 'true' } });
  nc.subscribe('busy.now', { callback: (_e, m) => { const until = Date.now() + Number(new TextDecoder().decode(m.data)); while (Date.now() < until); } });
  await nc.flush();
  console.log('ready');
})();
`;

describe('ServiceDirectory', () => {
  let nats: NatsHandle;
  let bus: Bus;
  let child: ChildProcess | undefined;

  beforeAll(async () => {
    nats = await startNats();
    bus = await Bus.connect({ ...defaultBusOptions(), servers: [nats.url], name: 'test' }, log);
  });
  afterAll(async () => {
    child?.kill('SIGKILL');
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
});
