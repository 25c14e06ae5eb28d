import { Bus, CountedEvents, defaultBusOptions } from '@chorus/bus';
import { createEnvelope, deriveEnvelope, type Envelope } from '@chorus/envelope';
import { createRootLogger } from '@chorus/observability';
import { startNats, type NatsHandle } from '@chorus/testing';
import { HubService } from '../src/hub.service';
import { LedgerStore } from '../src/ledger.store';
const LEDGER_EVENTS_STREAM = 'CHORUS_LEDGER';

const log = createRootLogger({ name: 'test', level: 'silent' });

/**
 * The active hub's lease can lapse for a moment without being lost: its renewal, sent every third
 * of the TTL, is late (a busy process, a slow NATS) while no other replica took the lease. Found by
 * the failure-under-load exploration (two hub replicas on a loaded 2-core machine): the hub left the
 * batch it was applying unacknowledged ('lease ran out while applying') and, its renewal through a
 * moment later, went on applying the same workflows' next envelopes before the first came again.
 * The ledger then held workflows without their query, classification or plan (counted as late),
 * with `query: null` and the wrong start.
 */
describe('hub: a lease that lapses while still held', () => {
  let nats: NatsHandle;
  let bus: Bus;
  let hub: HubService;
  let ledger: LedgerStore;
  const lease = { isLeader: true, holds: true };

  beforeAll(async () => {
    nats = await startNats();
    bus = await Bus.connect({ ...defaultBusOptions(), servers: [nats.url], name: 'test' }, log);
    await bus.ensureTopology();
    ledger = await LedgerStore.open(bus, 'chorus_workflows', 86_400_000, 1000, log);
    const events = await CountedEvents.open(bus, { stream: LEDGER_EVENTS_STREAM, prefix: 'chorus.ledger', maxAgeMs: 86_400_000 });
    hub = new HubService(bus, ledger, events, log, {
      sweepIntervalMs: 500,
      recentCapacity: 100,
      lingerMs: 0,
      maxDeadlineMs: 300_000,
      clockSkewMs: 60_000,
      retentionMs: 86_400_000,
      holdsLease: () => lease.isLeader && lease.holds,
      renewingLease: () => lease.isLeader && !lease.holds,
    });
    await hub.activate();
  });
  afterAll(async () => {
    hub?.deactivate();
    await bus?.close();
    await nats?.stop();
  });

  async function apply(envelope: Envelope, streamSeq: number) {
    return hub.onEnvelope(envelope, { idempotencyKey: `${envelope.correlation_id}.${envelope.message_type}.${envelope.agent}`, streamSeq }, log);
  }

  function workflow(id: string): { query: Envelope; classification: Envelope } {
    const query = createEnvelope({
      messageType: 'query',
      correlationId: id,
      tenantId: 'default',
      agent: 'test',
      deadline: new Date(Date.now() + 30_000).toISOString(),
      payload: { query: 'what does the hub keep', top_k: 5, require_all: false },
      nextSteps: ['intent'],
    });
    const classification = deriveEnvelope(query, {
      messageType: 'classification_result',
      agent: 'intent',
      payload: {} as never,
      nextSteps: ['planner'],
    });
    return { query, classification };
  }

  it('a batch applied while the renewal is late waits for it, and the workflow keeps its order', async () => {
    const { query, classification } = workflow('lapse-1');
    lease.holds = false; // the renewal is late; the lease is still this replica's
    const first = apply(query, 1);
    await new Promise((r) => setTimeout(r, 200));
    lease.holds = true; // renewed
    const second = apply(classification, 2);
    await expect(first).resolves.toMatchObject({ effect: 'applied' });
    await second;
    const record = (await ledger.read('default', 'lapse-1'))!;
    expect(record.query).toBe('what does the hub keep');
    expect(record.steps.map((s) => s.message_type)).toEqual(['query', 'classification_result']);
    expect(record.late_envelopes).toBe(0);
  });

  it('a lease lost while the batch waits leaves it to the active hub, writing nothing', async () => {
    const { query } = workflow('lapse-2');
    lease.holds = false;
    const first = apply(query, 3);
    await new Promise((r) => setTimeout(r, 200));
    lease.isLeader = false; // the renewal failed: another replica holds the lease
    await expect(first).rejects.toThrow(/no longer holds the lease/);
    expect(await ledger.read('default', 'lapse-2')).toBeNull();
    lease.isLeader = true;
    lease.holds = true;
  });
});
