import { AckPolicy, type JsMsg } from '@nats-io/jetstream';
import { createRootLogger } from '@chorus/observability';
import { LogCapture, startNats, waitFor, type NatsHandle } from '@chorus/testing';
import { Bus, DurableConsumer, KeyValueStore, LeaderLease, defaultBusOptions } from '@chorus/bus';

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

  // (A bucket of their own: a lease's TTL is its bucket's, set by whoever creates the bucket.)
  it('LeaderLease - a holder whose becoming active fails releases the lease and tries again, instead of holding it inactive (found by the cluster test)', async () => {
    const lease = await LeaderLease.open(bus, { bucket: 'test_leases_3s', name: 'flaky', ttlMs: 3000 }, log);
    let tries = 0;
    let lost = 0;
    let active = false;
    const triedAt: number[] = [];
    await lease.start(
      async () => {
        tries += 1;
        triedAt.push(Date.now());
        if (tries === 1) throw new Error('timeout'); // as a JetStream request does while a cluster re-elects
        active = true;
      },
      async () => void (lost += 1),
    );
    try {
      expect(lease.isLeader).toBe(false);
      // It keeps out for a lease time or so (for a healthy standby to win it), then wins it again.
      await waitFor(() => active, { what: 'active on the second try', timeoutMs: 6000 });
      expect({ tries, lost, holds: lease.holds }).toEqual({ tries: 2, lost: 1, holds: true });
      // Not at its very next check: a replica that keeps failing must not keep a healthy standby out.
      expect(triedAt[1] - triedAt[0]).toBeGreaterThanOrEqual(2900);
    } finally {
      await lease.stop(async () => undefined);
    }
  });

  it('LeaderLease - a standby takes over from a holder that cannot become active', async () => {
    const broken = await LeaderLease.open(bus, { bucket: 'test_leases_3s', name: 'broken', ttlMs: 3000 }, log);
    const standby = await LeaderLease.open(bus, { bucket: 'test_leases_3s', name: 'broken', ttlMs: 3000 }, log);
    let active = false;
    await broken.start(
      () => Promise.reject(new Error('cannot become active')),
      async () => undefined,
    );
    await standby.start(
      async () => void (active = true),
      async () => undefined,
    );
    try {
      // Well before the TTL: the broken holder let go of it.
      await waitFor(() => active, { what: 'the standby active', timeoutMs: 2500 });
      expect(standby.holds).toBe(true);
    } finally {
      await broken.stop(async () => undefined);
      await standby.stop(async () => undefined);
    }
  });

  it('LeaderLease - a holder stopped while it becomes active keeps its lease until it has stepped down: a standby starts only after', async () => {
    const stopping = await LeaderLease.open(bus, { bucket: 'test_leases', name: 'stopping', ttlMs: 600 }, log);
    const standby = await LeaderLease.open(bus, { bucket: 'test_leases', name: 'stopping', ttlMs: 600 }, log);
    const events: string[] = [];
    const started = stopping.start(
      async () => {
        events.push('stopping: activating');
        await new Promise((r) => setTimeout(r, 2000)); // more than three lease times
        events.push('stopping: active');
      },
      async () => void events.push('stopping: standby'),
    );
    await waitFor(() => events.length > 0, { what: 'the first holder activating' });
    await standby.start(
      async () => void events.push('standby: active'),
      async () => undefined,
    );
    try {
      await stopping.stop(async () => void events.push('stopping: standby'));
      await started;
      await waitFor(() => events.includes('standby: active'), { what: 'the standby active' });
      expect(events).toEqual(['stopping: activating', 'stopping: active', 'stopping: standby', 'standby: active']);
    } finally {
      await standby.stop(async () => undefined);
    }
  });

  it("LeaderLease - a standby's log line names the replica holding the lease, and its own id apart (it gave its own id as the holder; found by the docs walkthrough)", async () => {
    const capture = new LogCapture();
    const standbyLog = createRootLogger({ name: 'standby', level: 'info', destination: capture });
    const holder = await LeaderLease.open(bus, { bucket: 'test_leases_3s', name: 'named', ttlMs: 3000 }, log);
    const standby = await LeaderLease.open(bus, { bucket: 'test_leases_3s', name: 'named', ttlMs: 3000 }, standbyLog);
    try {
      await holder.start(async () => undefined, async () => undefined);
      await standby.start(async () => undefined, async () => undefined);
      const line = await waitFor(() => capture.lines.find((l) => /standing by/.test(String(l.msg))), { what: 'the standby line' });
      expect({ holder: line.holder, replica: line.replica }).toEqual({ holder: holder.holder, replica: standby.holder });
    } finally {
      await standby.stop(async () => undefined);
      await holder.stop(async () => undefined);
    }
  });

  it('LeaderLease - a holder whose renewal comes after its lease expired, no other replica having held it, wins it back at once instead of stepping down (a hub that stepped down rebuilt its state for seconds under load and lost the lease again: found by the soak exploration)', async () => {
    const capture = new LogCapture();
    const lease = await LeaderLease.open(bus, { bucket: 'test_leases_expiry', name: 'starved', ttlMs: 1000 }, createRootLogger({ name: 'starved', level: 'info', destination: capture }));
    let lost = 0;
    try {
      await lease.start(async () => undefined, async () => void (lost += 1));
      // A starved process: nothing runs for three lease times, and the server lets the lease expire.
      const until = Date.now() + 3000;
      while (Date.now() < until);
      await waitFor(() => capture.lines.some((l) => /won back at once/.test(String(l.msg))), { what: 'the lease won back', timeoutMs: 5000 });
      await new Promise((r) => setTimeout(r, 500));
      expect({ lost, holds: lease.holds }).toEqual({ lost: 0, holds: true });
    } finally {
      await lease.stop(async () => undefined);
    }
  });

  it('LeaderLease - a holder whose lease expired while another replica held it and let it go steps down: what it knew may be stale', async () => {
    const holder = await LeaderLease.open(bus, { bucket: 'test_leases_expiry', name: 'between', ttlMs: 1000 }, log);
    const other = await LeaderLease.open(bus, { bucket: 'test_leases_expiry', name: 'between', ttlMs: 1000 }, log);
    let lost = 0;
    try {
      await holder.start(async () => undefined, async () => void (lost += 1));
      // The holder stalls (its renewals stop) while the other replica takes the lease and lets it go.
      const paused = holder as unknown as { timer?: NodeJS.Timeout; renew(onLose: () => Promise<void>): Promise<void> };
      clearTimeout(paused.timer);
      await waitFor(async () => {
        await other.start(async () => undefined, async () => undefined);
        return other.isLeader || undefined;
      }, { what: 'the other replica leading', timeoutMs: 10_000 });
      await other.stop(async () => undefined);
      await paused.renew(async () => void (lost += 1));
      await waitFor(() => lost === 1 || undefined, { what: 'the holder stepping down' });
      expect(holder.isLeader).toBe(false);
    } finally {
      await other.stop(async () => undefined);
      await holder.stop(async () => undefined);
    }
  });

  it('LeaderLease - a holder whose lease bucket was deleted and made again while it stalled does not win back a lease another replica held there: the new bucket counts revisions from 1 again (found by review)', async () => {
    const bucket = 'test_leases_remade';
    const holder = await LeaderLease.open(bus, { bucket, name: 'remade', ttlMs: 1000 }, log);
    let lost = 0;
    try {
      await holder.start(async () => undefined, async () => void (lost += 1));
      const paused = holder as unknown as { timer?: NodeJS.Timeout; revision: number; renew(onLose: () => Promise<void>): Promise<void> };
      clearTimeout(paused.timer);
      // The bucket is deleted and made again; another replica holds the lease there until its
      // revision is the stalled holder's, and lets it expire.
      await bus.jsm.streams.delete(`KV_${bucket}`);
      const remade = await KeyValueStore.open<{ holder: string; since: string }>(bus, bucket, { history: 1, ttlMs: 1000 });
      let revision = await remade.create('remade', { holder: 'another', since: new Date().toISOString() });
      while (revision < paused.revision) revision = await remade.update('remade', { holder: 'another', since: new Date().toISOString() }, revision);
      expect(revision).toBe(paused.revision);
      await waitFor(async () => (await remade.latest('remade')) === null || undefined, { what: 'the other replica\'s lease expiring', timeoutMs: 5000 });
      await paused.renew(async () => void (lost += 1));
      await waitFor(() => lost === 1 || undefined, { what: 'the holder stepping down' });
      expect(holder.isLeader).toBe(false);
    } finally {
      await holder.stop(async () => undefined);
    }
  });

  it('LeaderLease - a lease stored by a create whose answer timed out is released at the next check, not left to keep everyone out for a TTL (found by review)', async () => {
    const lease = await LeaderLease.open(bus, { bucket: 'test_leases_3s', name: 'unanswered', ttlMs: 3000 }, log);
    // What a create that timed out after the server stored it leaves: the key, held in this replica's name.
    const kv = await KeyValueStore.open<{ holder: string; since: string }>(bus, 'test_leases_3s', { history: 1, ttlMs: 3000 });
    await kv.create('unanswered', { holder: lease.holder, since: new Date().toISOString() });
    (lease as unknown as { createUnanswered: boolean }).createUnanswered = true;
    let active = false;
    await lease.start(
      async () => void (active = true),
      async () => undefined,
    );
    try {
      expect(active).toBe(false); // its first check found the key, and released it
      await waitFor(() => active, { what: 'active at the next check', timeoutMs: 2000 });
    } finally {
      await lease.stop(async () => undefined);
    }
  });

  /** A started consumer of its own tenant's queries that checks for stalls every 300 ms, and the sequences it acknowledged. */
  const watchedConsumer = async (tenant: string) => {
    const subject = (i: number) => `chorus.wf.${tenant}.query.wf-${i}`;
    const spec = { stream: bus.options.workflowStream, durable: `${tenant}_test`, filter: `chorus.wf.${tenant}.query.*`, ackWaitMs: 30_000, maxDeliver: 5, concurrency: 4, stallCheckMs: 300 };
    const seen: number[] = [];
    const consumer = new DurableConsumer(bus, spec, async (m: JsMsg) => void (seen.push(m.seq), m.ack()), log);
    await consumer.start();
    return { subject, spec, seen, consumer };
  };

  it('DurableConsumer - a consumer deleted on the server is created again, from its acknowledgement floor as last seen, and its messages flow again without a restart (found by the cluster exploration)', async () => {
    const { subject, spec, seen, consumer } = await watchedConsumer('gone');
    try {
      const first = (await bus.js.publish(subject(0), '{}')).seq;
      await waitFor(() => seen.includes(first), { what: 'the first message' });
      await bus.jsm.consumers.delete(spec.stream, spec.durable);
      const later = [(await bus.js.publish(subject(1), '{}')).seq, (await bus.js.publish(subject(2), '{}')).seq];
      await waitFor(() => later.every((seq) => seen.includes(seq)), { what: 'the messages stored after the delete', timeoutMs: 20_000 });
      // Nothing before the floor again (the first may come again, when no check saw it acknowledged before the delete).
      expect(seen.filter((seq) => seq < first)).toEqual([]);
    } finally {
      await consumer.stop(0);
    }
  }, 30_000);

  it('DurableConsumer - a consumer deleted and made again as something else (a push consumer of other subjects) is replaced by its own, from its acknowledgement floor, and its messages flow again (found by the security exploration)', async () => {
    const { subject, spec, seen, consumer } = await watchedConsumer('taken');
    try {
      const first = (await bus.js.publish(subject(0), '{}')).seq;
      await waitFor(() => seen.includes(first), { what: 'the first message' });
      // Its acknowledgement seen by a check (one runs once the consumer has been idle 600 ms).
      await new Promise((r) => setTimeout(r, 1000));
      await bus.jsm.consumers.delete(spec.stream, spec.durable);
      await bus.jsm.consumers.add(spec.stream, { durable_name: spec.durable, deliver_subject: '_INBOX.elsewhere', filter_subject: 'chorus.wf.none.query.none', ack_policy: AckPolicy.Explicit });
      const later = [(await bus.js.publish(subject(1), '{}')).seq, (await bus.js.publish(subject(2), '{}')).seq];
      await waitFor(() => later.every((seq) => seen.includes(seq)), { what: 'the messages stored after the swap', timeoutMs: 20_000 });
      const info = await bus.jsm.consumers.info(spec.stream, spec.durable);
      expect({ push: info.config.deliver_subject ?? null, filter: info.config.filter_subject }).toEqual({ push: null, filter: spec.filter });
      expect(seen.filter((seq) => seq < first)).toEqual([]);
    } finally {
      await consumer.stop(0);
    }
  }, 30_000);

  it('DurableConsumer - a consumer whose pulls go unanswered while the server holds messages for it pulls anew', async () => {
    const { subject, seen, consumer } = await watchedConsumer('stall');
    try {
      // What a cluster that lost its quorum left: the client pulling into a void (here, its inbox gone).
      (consumer as unknown as { messages: { sub: { unsubscribe(): void } } }).messages.sub.unsubscribe();
      const stored = [(await bus.js.publish(subject(1), '{}')).seq, (await bus.js.publish(subject(2), '{}')).seq];
      await waitFor(() => stored.every((seq) => seen.includes(seq)), { what: 'the messages stored meanwhile', timeoutMs: 10_000 });
    } finally {
      await consumer.stop(0);
    }
  }, 30_000);

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

  it('LeaderLease - a lease time changed after its bucket was created is applied to the bucket: the holder keeps its lease', async () => {
    // The bucket as the first hubs created it, with a 600 ms lease.
    await KeyValueStore.open(bus, 'test_leases_changed', { history: 1, ttlMs: 600 });
    // Restarted with a 3 s lease: renewed every second. Before, the bucket kept its 600 ms, the key
    // expired between renewals, and the holder lost its lease at its first renewal (two hubs took it
    // from each other every few seconds).
    const logs = new LogCapture();
    const lease = await LeaderLease.open(bus, { bucket: 'test_leases_changed', name: 'changed', ttlMs: 3000, ttlSetting: 'CHORUS_HUB_LEASE_MS' }, createRootLogger({ name: 'test', level: 'warn', destination: logs }));
    // Said, naming the setting: replicas started with different values would take the lease from each other.
    await waitFor(() => logs.lines.length > 0);
    expect(logs.lines).toEqual([
      expect.objectContaining({ level: 40, bucket: 'test_leases_changed', ttl_ms: 3000, previous_ttl_ms: 600, msg: expect.stringMatching(/start every replica with the same CHORUS_HUB_LEASE_MS$/) }),
    ]);
    let lost = 0;
    await lease.start(async () => undefined, async () => void (lost += 1));
    try {
      expect(lease.isLeader).toBe(true);
      await new Promise((r) => setTimeout(r, 2500));
      expect({ lost, leader: lease.isLeader }).toEqual({ lost: 0, leader: true });
      expect((await bus.jsm.streams.info('KV_test_leases_changed')).config.max_age).toBe(3000 * 1_000_000);
      // And shortened again, below the duplicate window the bucket was given: refused by the server unless shortened with it.
      await KeyValueStore.open(bus, 'test_leases_changed', { history: 1, ttlMs: 500 });
      expect((await bus.jsm.streams.info('KV_test_leases_changed')).config.max_age).toBe(500 * 1_000_000);
    } finally {
      await lease.stop(async () => undefined);
    }
  });
});
