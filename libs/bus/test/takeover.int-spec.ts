import type { JsMsg } from '@nats-io/jetstream';
import { createRootLogger } from '@chorus/observability';
import { startNats, waitFor, type NatsHandle } from '@chorus/testing';
import { Bus, DurableConsumer, LeaderLease, defaultBusOptions } from '@chorus/bus';

const log = createRootLogger({ name: 'test', level: 'silent' });

/** What a single active consumer (the hub) needs to take over: its lease kept, its place in the stream kept. */
describe('takeover', () => {
  let nats: NatsHandle;
  let bus: Bus;

  beforeAll(async () => {
    nats = await startNats();
    bus = await Bus.connect({ ...defaultBusOptions(), servers: [nats.url], name: 'test' }, log);
    await bus.ensureTopology();
  });
  afterAll(async () => {
    await bus?.close();
    await nats?.stop();
  });

  it('LeaderLease - a holder whose becoming active takes several lease times keeps renewing its lease meanwhile, and keeps it', async () => {
    const lease = await LeaderLease.open(bus, { bucket: 'test_leases', name: 'slow', ttlMs: 600 }, log);
    let lost = 0;
    let active = false;
    await lease.start(
      async () => {
        await new Promise((r) => setTimeout(r, 2000)); // more than three lease times
        active = true;
      },
      async () => void (lost += 1),
    );
    expect(active).toBe(true);
    await new Promise((r) => setTimeout(r, 700));
    expect({ lost, holds: lease.holds, leader: lease.isLeader }).toEqual({ lost: 0, holds: true, leader: true });
    await lease.stop(async () => undefined);
  });

  it('DurableConsumer - resumed in order twice, with nothing acknowledged after the first resume, starts where the first resume did, not at the start of the stream', async () => {
    const subject = (i: number) => `chorus.wf.acme.query.takeover-${i}`;
    const spec = { stream: bus.options.workflowStream, durable: 'takeover_test', filter: 'chorus.wf.acme.query.*', ackWaitMs: 30_000, maxDeliver: 5, concurrency: 4, resumeInOrder: true };
    const seqs: number[] = [];
    for (let i = 0; i < 5; i++) seqs.push((await bus.js.publish(subject(i), '{}')).seq);
    // The first holder acknowledges the first five.
    const first = new DurableConsumer(bus, spec, async (m: JsMsg) => m.ack(), log);
    await first.start();
    await waitFor(async () => (await bus.jsm.consumers.info(spec.stream, spec.durable)).ack_floor.stream_seq >= seqs[4], { what: 'five acknowledged' });
    await first.stop(0);
    for (let i = 5; i < 10; i++) seqs.push((await bus.js.publish(subject(i), '{}')).seq);
    // Two holders in turn take the next five and die without acknowledging any.
    for (let holder = 0; holder < 2; holder++) {
      const seen: number[] = [];
      const dying = new DurableConsumer(bus, spec, async (m: JsMsg) => void seen.push(m.seq), log);
      await dying.start();
      await waitFor(() => seen.length >= 5, { what: `holder ${holder} got the next five` });
      expect(Math.min(...seen)).toBe(seqs[5]);
      await dying.stop(0);
    }
    const info = await bus.jsm.consumers.info(spec.stream, spec.durable);
    expect(info.config.opt_start_seq).toBe(seqs[5]);
  });
});
