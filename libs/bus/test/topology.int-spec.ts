import { createRootLogger } from '@chorus/observability';
import { startNats, type NatsHandle } from '@chorus/testing';
import { Bus, defaultBusOptions, type BusOptions } from '@chorus/bus';

const log = createRootLogger({ name: 'test', level: 'silent' });

describe('Bus.ensureTopology', () => {
  let nats: NatsHandle;
  const buses: Bus[] = [];

  beforeAll(async () => {
    nats = await startNats({ own: true });
  });
  afterAll(async () => {
    await Promise.all(buses.map((b) => b.close()));
    await nats?.stop();
  });

  async function connect(options: Partial<BusOptions>): Promise<Bus> {
    const bus = await Bus.connect({ ...defaultBusOptions(), servers: [nats.url], name: 'test', ...options }, log);
    buses.push(bus);
    return bus;
  }

  it('applies the byte limits of the workflow and dead-letter streams, changes them, and keeps a limit an operator set when none is configured', async () => {
    const maxBytes = async (bus: Bus) => [(await bus.jsm.streams.info('CHORUS_WF')).config.max_bytes, (await bus.jsm.streams.info('CHORUS_DLQ')).config.max_bytes];
    const first = await connect({});
    await first.ensureTopology();
    expect(await maxBytes(first)).toEqual([-1, -1]);

    const limited = await connect({ workflowMaxBytes: 64 * 1024 ** 2, deadLetterMaxBytes: 16 * 1024 ** 2 });
    await limited.ensureTopology();
    expect(await maxBytes(limited)).toEqual([64 * 1024 ** 2, 16 * 1024 ** 2]);

    // Not configured: what the streams hold stays (here, as an operator's `nats stream edit` would have set it).
    const wf = (await first.jsm.streams.info('CHORUS_WF')).config;
    await first.jsm.streams.update('CHORUS_WF', { ...wf, max_bytes: 32 * 1024 ** 2 });
    const unset = await connect({});
    await unset.ensureTopology();
    expect(await maxBytes(unset)).toEqual([32 * 1024 ** 2, 16 * 1024 ** 2]);

    // The oldest messages go once the limit is reached; the stream keeps taking new ones.
    const small = await connect({ workflowMaxBytes: 1024 ** 2 });
    await small.ensureTopology();
    const body = new Uint8Array(100_000);
    for (let i = 0; i < 30; i++) await small.js.publish(`chorus.wf.acme.query.big${i}`, body);
    const state = (await small.jsm.streams.info('CHORUS_WF')).state;
    expect(state.bytes).toBeLessThanOrEqual(1024 ** 2);
    expect(state.last_seq).toBe(30);
    expect(state.first_seq).toBeGreaterThan(1);
  });

  it('a workflow stream renamed on a server that has the old one names the stream holding its subjects and the settings, not only "subjects overlap"', async () => {
    const renamed = await connect({ workflowStream: 'CHORUS_WF2' });
    await expect(renamed.ensureTopology()).rejects.toThrow(
      /^stream CHORUS_WF2 cannot be created: its subjects \(chorus\.wf\.>\) belong to stream CHORUS_WF on this server\. Every app of a deployment must use the same stream names \(CHORUS_WORKFLOW_STREAM, .*delete stream CHORUS_WF first/,
    );
  });
});
