import { CountedEvents, createJsonConsumer, isStreamMissing, LeaderLease, registerAgentService, retryTransient, startAgent, type Bus, type Component, type Responder } from '@chorus/bus';
import type { ChorusConfig } from '@chorus/config';
import { HUB_AGENT } from '@chorus/correlation';
import { DUPLICATE_PREFIX, duplicateNoticeProblem, type DuplicateNotice } from '@chorus/envelope';
import type { Logger } from '@chorus/observability';
import { unsupportedDuplicateNotice } from './duplicate-notice.check';
import { HubModule } from './hub.module';
import { HubQueries } from './hub.queries';
import { HubService } from './hub.service';
import { LedgerStore } from './ledger.store';

export const LEDGER_EVENTS_STREAM = 'CHORUS_LEDGER';

/** The exact totals as Prometheus gauges, read from the ledger events at scrape time (once per scrape). */
function registerHubMetrics(bus: Bus, queries: HubQueries, hub: HubService): void {
  bus.metrics.counterFrom('chorus_hub_ledger_writes_total', 'Ledger writes by this hub since it started', () => hub.writes.records);
  bus.metrics.counterFrom('chorus_hub_ledger_transitions_total', 'Envelopes and events whose effects those writes stored', () => hub.writes.transitions);
  bus.metrics.counterFrom(
    'chorus_hub_unknown_workflow_envelopes_total',
    'Status updates and commands of a workflow the ledger has no record of, left out of it, by this hub since it started',
    () => hub.strays.count,
  );
  // Every replica serves the totals below (read from the ledger events, the same on each): sum them
  // over the replica that is active, or take their max, not their sum over every replica.
  bus.metrics.gauge('chorus_hub_active', 'Whether this hub replica holds the lease and applies the ledger (1) or stands by (0)', [], async (set) => set({}, hub.isActive ? 1 : 0));
  // The four gauges below share one read of the totals per scrape.
  let read: { at: number; totals: ReturnType<typeof fetchTotals> } | undefined;
  const fetchTotals = () => queries.stats().then((s) => s.totals);
  const totals = () => {
    if (!read || Date.now() - read.at > 1000) read = { at: Date.now(), totals: fetchTotals() };
    return read.totals;
  };
  bus.metrics.gauge('chorus_workflows', 'Workflows by status (active = not finished)', ['status'], async (set) => {
    const t = await totals();
    for (const status of ['completed', 'failed', 'timed_out', 'cancelled', 'active'] as const) set({ status }, t[status]);
  });
  bus.metrics.gauge('chorus_duplicates_dropped', 'Duplicate envelopes dropped, in the totals window', [], async (set) => set({}, (await totals()).duplicates_dropped));
  bus.metrics.gauge('chorus_late_envelopes', 'Envelopes that arrived after their workflow finished', [], async (set) => set({}, (await totals()).late_envelopes));
  bus.metrics.gauge('chorus_workflows_retried', 'Workflows retried (orchestration_command retry), in the totals window', [], async (set) => set({}, (await totals()).retried));
  bus.metrics.gauge('chorus_dead_letters', 'Dead letters stored', [], async (set) => set({}, (await totals()).dead_letters));
}
export const LEDGER_EVENTS_PREFIX = 'chorus.ledger';

/**
 * The correlation hub. Replicas elect one active hub through a lease: only it consumes the
 * workflow stream (durable consumer `hub_all`) and the duplicate notices, sweeps deadlines and
 * answers list and stats; every replica answers status and history. One writer keeps each
 * workflow's envelopes in stream order, which two competing consumers could not; a standby takes
 * over within the lease time when the active hub dies. See docs/hub.md.
 */
export async function startHub(bus: Bus, config: ChorusConfig, parentLog: Logger): Promise<Component> {
  const log = parentLog.child({ agent: HUB_AGENT });
  // Opening creates the bucket and streams when missing: on a cluster still electing its leaders
  // (or busy), those calls can time out, and the hub waits for NATS rather than exiting.
  const openLedger = () => LedgerStore.open(bus, config.hub.bucket, config.hub.retentionMs, config.hub.cacheSize, log);
  const openEvents = () => CountedEvents.open(bus, { stream: LEDGER_EVENTS_STREAM, prefix: LEDGER_EVENTS_PREFIX, maxAgeMs: config.hub.totalsRetentionMs });
  const openLease = () => LeaderLease.open(bus, { bucket: 'chorus_leases', name: HUB_AGENT, ttlMs: config.hub.leaseMs, ttlSetting: 'CHORUS_HUB_LEASE_MS' }, log);
  const ledger = await retryTransient(openLedger, log, 'opening the ledger');
  const events = await retryTransient(openEvents, log, 'opening the ledger events');
  // The lease is opened below; until then, and whenever it cannot be sure to hold it, the hub writes nothing.
  let lease: LeaderLease | undefined;
  const hub = new HubService(bus, ledger, events, log, {
    sweepIntervalMs: config.hub.sweepIntervalMs,
    recentCapacity: config.hub.recentCapacity,
    lingerMs: config.hub.lingerMs,
    maxDeadlineMs: config.workflow.maxDeadlineMs,
    clockSkewMs: config.hub.clockSkewMs,
    retentionMs: config.hub.retentionMs,
    holdsLease: () => lease?.holds ?? false,
    renewingLease: () => (lease?.isLeader ?? false) && !lease?.holds,
  });
  const queries = new HubQueries(bus, hub, ledger, events, log, config.hub.retentionMs);
  const reads = queries.serveReads();
  registerHubMetrics(bus, queries, hub);
  lease = await retryTransient(openLease, log, 'opening the lease');
  // Making them again opens them again: what they hold is on the server, under the same names.
  const topology = watchTopology(bus, log, async () => {
    await bus.ensureTopology();
    await openLedger();
    await openEvents();
    await openLease();
  });

  let active: { components: Component[]; responders: Responder[] } | undefined;
  // Stops everything active, even when something fails to stop (it is logged): a hub left half active without its lease would go on consuming.
  const stopAll = async (components: Component[], when: string) => {
    for (const c of components) await c.close().catch((err: unknown) => log.warn({ err, component: c.name }, `closing ${when} failed`));
  };
  const becomeActive = async () => {
    // What started is stopped again when a later step fails (the lease then steps down and tries again).
    const started: Component[] = [];
    try {
      await hub.activate();
      const duplicates = createJsonConsumer<DuplicateNotice>(
        bus,
        {
          stream: config.bus.duplicateStream,
          durable: 'hub_duplicates',
          filter: `${DUPLICATE_PREFIX}.>`,
          ackWaitMs: config.consumer.ackWaitMs,
          maxDeliver: config.consumer.maxDeliver,
          concurrency: 16,
          resumeInOrder: true,
        },
        async (notice, meta) => {
          // Counted on the workflow its subject names (all a publisher's NATS user is held to), when the
          // stream holds what it says was duplicated; any other is dropped once, not retried.
          const problem = duplicateNoticeProblem(notice, meta.subject) ?? (await unsupportedDuplicateNotice(bus, notice));
          if (problem) return void log.warn({ subject: meta.subject, problem }, 'duplicate notice refused');
          await hub.onDroppedDuplicate(notice, meta.streamSeq);
        },
        log,
      );
      await duplicates.start();
      started.push({ name: 'hub-duplicates', close: () => duplicates.stop() });
      const agent = await startAgent(HUB_AGENT, HubModule.register(hub), {
        bus,
        consumer: {
          ...config.consumer,
          agent: HUB_AGENT,
          skipExpired: false,
          skipFinished: false,
          resumeInOrder: true,
          reportFailures: false,
          // Envelopes wait for their workflow's ledger write (up to CHORUS_HUB_LINGER_MS): room for many workflows.
          concurrency: Math.max(config.consumer.concurrency, 256),
          // The ledger must not give up on an envelope because NATS was away for a while.
          maxDeliver: Math.max(config.consumer.maxDeliver, 50),
        },
        log,
        register: false,
      });
      started.unshift(agent);
      active = { components: started, responders: queries.serveActive() };
    } catch (e) {
      await stopAll(started, 'after a failed activation');
      hub.deactivate();
      throw e;
    }
  };
  const becomeStandby = async () => {
    const was = active;
    active = undefined;
    try {
      if (was) {
        await Promise.all(was.responders.map((r) => r.stop().catch((err: unknown) => log.warn({ err }, 'stopping a responder failed'))));
        await stopAll(was.components, 'on standing by');
      }
    } finally {
      hub.deactivate();
    }
  };
  await lease.start(becomeActive, becomeStandby);
  // Every replica, active or standby, is an instance of the hub for discovery.
  const service = await registerAgentService(bus, HUB_AGENT, { consumers: 'hub_all,hub_duplicates' }, log);
  return {
    name: HUB_AGENT,
    close: async () => {
      clearInterval(topology);
      await service.stop();
      await lease.stop(becomeStandby);
      await Promise.all(reads.map((r) => r.stop()));
    },
  };
}

/** How often the hub checks that the workflow stream is still on the NATS server. */
export const TOPOLOGY_CHECK_MS = 5_000;

/**
 * A NATS server restarted without its store (or whose streams were deleted by hand) leaves every
 * process failing on streams that are gone: every query refused, the lease never renewed, for as
 * long as nothing restarts Chorus. Every replica of the hub, which manages the streams and buckets,
 * checks that the workflow stream exists and makes them all again when it does not (their earlier
 * content is gone with the store); the consumers are made again by their own checks.
 */
function watchTopology(bus: Bus, log: Logger, remake: () => Promise<void>): NodeJS.Timeout {
  let busy = false;
  const timer = setInterval(() => {
    if (busy || bus.reconnecting) return;
    busy = true;
    void (async () => {
      try {
        await bus.jsm.streams.info(bus.options.workflowStream);
      } catch (e) {
        if (!isStreamMissing(e)) return;
        log.error({ stream: bus.options.workflowStream }, `the workflow stream ${bus.options.workflowStream} is gone from the NATS server (restarted without its store, or deleted): making Chorus's streams and buckets again; what they held is lost`);
        await remake().then(
          () => log.warn('Chorus\'s streams and buckets are made again'),
          (err: unknown) => log.error({ err }, 'making the streams and buckets again failed; trying again shortly'),
        );
      } finally {
        busy = false;
      }
    })();
  }, TOPOLOGY_CHECK_MS);
  timer.unref();
  return timer;
}
