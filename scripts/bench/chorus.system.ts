import { Bus, ChorusClient, defaultBusOptions } from '@chorus/bus';
import { ALL_WORKFLOW_SUBJECTS, isTerminalStatus, workflowFilter, type Envelope, type WorkflowStatus } from '@chorus/envelope';
import { createRootLogger } from '@chorus/observability';
import { spawnApp, startBenchNats, type BenchNats, type ChildApp } from './bench.support';
import { PendingWorkflows, sleep } from './load';
import { headerBytes } from './traffic';
import type { SystemId, SystemUnderTest } from './system.types';
import { queryText } from './workload';

/**
 * Chorus itself, with its real agents (the search worker really searches the default corpus with
 * two profiles and fuses them), JetStream durability and dedup on every hop, envelope validation
 * and the hub's ledger. The benchmark's client plays the ingress over the bus (`ChorusClient.submit`:
 * build and validate the query envelope, publish it, await the PubAck); a workflow is complete when
 * the hub announces its terminal `status_update`.
 */
export const CHORUS_PROCESS_APPS = ['hub', 'profile', 'intent', 'planner', 'search', 'responder'] as const;

/** One envelope as it crossed the wire, for the overhead report. */
export interface WireEnvelope {
  envelope: Envelope;
  subjectBytes: number;
  headerBytes: number;
  bodyBytes: number;
}

/** The time between two consecutive envelopes of a workflow, as a subscriber on the server sees them. */
export interface HopLatency {
  /** `agent:message_type` of the earlier envelope (`driver:submit` for the client's publish call). */
  from: string;
  to: string;
  p50Ms: number;
  p90Ms: number;
  /** Workflows in which this pair followed each other. */
  samples: number;
}

export interface ChorusSystem extends SystemUnderTest {
  /** Runs one workflow while recording each envelope type it put on the wire (first of each). */
  sampleEnvelopes(): Promise<WireEnvelope[]>;
  /**
   * Runs `warmup` workflows, then `count` more one after another (concurrency 1) while a subscriber on
   * every workflow subject timestamps each envelope: where a workflow's latency goes, hop by hop.
   */
  sampleHops(count: number, warmup: number): Promise<{ hops: HopLatency[]; workflows: number; failed: number }>;
  /** Stops one of the system's processes (`hub`, `agents`, …), leaving the others running. */
  stopProcess(name: string): Promise<void>;
}

export function chorusEnv(natsUrl: string): Record<string, string> {
  return {
    NATS_URL: natsUrl,
    CHORUS_HTTP_PORT: '0',
    CHORUS_LOG_LEVEL: 'warn',
    // Long enough that a workflow queued behind a saturated system is measured, not timed out.
    CHORUS_DEFAULT_DEADLINE_MS: '60000',
  };
}

/**
 * - `aio`: every app in one process (`npm start`; its idle HTTP ingress included);
 * - `procs`: one process per app (hub, profile, intent, planner, search, responder);
 * - `hub-apart`: the hub alone and every other app in one process (the hub's memory benchmark).
 */
export type ChorusLayout = 'aio' | 'procs' | 'hub-apart';

export async function startChorusSystem(layout: ChorusLayout): Promise<ChorusSystem> {
  const id: SystemId | 'chorus-hub-apart' = layout === 'aio' ? 'chorus-aio' : layout === 'procs' ? 'chorus-procs' : 'chorus-hub-apart';
  const nats = await startBenchNats();
  const env = chorusEnv(nats.url);
  const apps: Array<{ name: string; app: ChildApp }> = [];
  let bus: Bus | undefined;
  try {
    if (layout === 'aio') {
      const app = spawnApp('chorus', env);
      apps.push({ name: 'chorus', app });
      await app.waitFor(/Chorus ready/);
    } else if (layout === 'procs') {
      for (const name of CHORUS_PROCESS_APPS) apps.push({ name, app: spawnApp(name, env) });
    } else {
      apps.push({ name: 'hub', app: spawnApp('hub', env) });
      const agents = spawnApp('chorus', { ...env, CHORUS_APPS: 'profiles,intent,planner,search,responder' });
      apps.push({ name: 'agents', app: agents });
      await agents.waitFor(/Chorus ready/);
    }
    bus = await Bus.connect({ ...defaultBusOptions(), servers: [nats.url], name: `bench-${id}` }, createRootLogger({ name: 'bench', level: 'warn' }));
    return await connectDriver(id, nats, bus, apps);
  } catch (e) {
    await bus?.close().catch(() => undefined);
    await Promise.all(apps.map((a) => a.app.stop()));
    await nats.stop();
    throw e;
  }
}

async function connectDriver(id: string, nats: BenchNats, bus: Bus, apps: Array<{ name: string; app: ChildApp }>): Promise<ChorusSystem> {
  const client = new ChorusClient(bus, {
    agent: 'bench',
    correlation: { strategy: 'uuidv7', secret: 'bench' },
    defaultDeadlineMs: 60_000,
    defaultTopK: 10,
    requestTimeoutMs: 10_000,
    terminalGraceMs: 1000,
  });
  const pending = new PendingWorkflows(70_000);
  const terminal = new Map<WorkflowStatus, number>();
  // One subscription for every workflow's status updates (cheaper than one per workflow).
  bus.nc.subscribe(workflowFilter({ messageType: 'status_update' }), {
    callback: (_e, m) => {
      if (m.headers?.get('Chorus-Agent') !== 'hub') return;
      const status = m.json<{ payload: { workflow_status: WorkflowStatus } }>().payload.workflow_status;
      if (!isTerminalStatus(status)) return;
      terminal.set(status, (terminal.get(status) ?? 0) + 1);
      const correlationId = m.subject.slice(m.subject.lastIndexOf('.') + 1);
      pending.settle(correlationId, status === 'completed' ? null : new Error(`workflow ${correlationId} ${status}`));
    },
  });
  await bus.nc.flush();
  const run = async (seq: number) => {
    const submitted = await client.submit({ query: queryText(seq), tenant_id: 'default' });
    await pending.wait(submitted.correlation_id);
  };
  await waitUntilServing(client, run, apps);

  return {
    id,
    url: nats.url,
    monitorUrl: nats.monitorUrl,
    processes: () => Object.fromEntries([['nats-server', nats.pid], ...apps.map((a) => [a.name, a.app.child.pid])]),
    run,
    notes: async () => {
      const notes = [`terminal states seen: ${[...terminal.entries()].map(([s, n]) => `${s}=${n}`).join(' ')}`];
      try {
        const recent = await client.list({ limit: 500 });
        const degraded = recent.workflows.filter((w) => w.degraded).length;
        notes.push(`degraded (a search profile missed its deadline) among the last ${recent.workflows.length} workflows: ${degraded}`);
      } catch (e) {
        notes.push(`hub list failed: ${(e as Error).message}`);
      }
      return notes;
    },
    sampleEnvelopes: async () => {
      const seen = new Map<string, WireEnvelope>();
      const sub = bus.nc.subscribe(ALL_WORKFLOW_SUBJECTS, {
        callback: (_e, m) => {
          const envelope = m.json<Envelope>();
          if (seen.has(envelope.message_type)) return;
          seen.set(envelope.message_type, { envelope, subjectBytes: m.subject.length, headerBytes: headerBytes(m.headers), bodyBytes: m.data.length });
        },
      });
      await bus.nc.flush();
      await run(1_000_000_000);
      await sleep(300); // the hub's last status update trails the terminal one we waited for
      sub.unsubscribe();
      return [...seen.values()];
    },
    sampleHops: async (count, warmup) => {
      // Warm (JIT, caches) before timing, as the measured levels are. A workflow that fails is skipped.
      for (let i = 0; i < warmup; i++) await run(3_100_000_000 + i).catch(() => undefined);
      const events = new Map<string, Array<[string, number]>>();
      const sub = bus.nc.subscribe(ALL_WORKFLOW_SUBJECTS, {
        callback: (_e, m) => {
          // Stamped first, and only the small status updates parsed: the probe shares the driver's thread.
          const t = performance.now();
          const [, , , messageType, correlationId] = m.subject.split('.');
          const status = messageType === 'status_update' ? `/${m.json<{ payload: { workflow_status?: string } }>().payload.workflow_status}` : '';
          const list = events.get(correlationId) ?? events.set(correlationId, []).get(correlationId)!;
          list.push([`${m.headers?.get('Chorus-Agent') ?? '?'}:${messageType}${status}`, t]);
        },
      });
      await bus.nc.flush();
      const runs: Array<Array<[string, number]>> = [];
      let failed = 0;
      try {
        for (let i = 0; i < count; i++) {
          const started = performance.now();
          try {
            const submitted = await client.submit({ query: queryText(3_000_000_000 + i), tenant_id: 'default' });
            await pending.wait(submitted.correlation_id);
            const list = events.get(submitted.correlation_id) ?? [];
            list.push(['driver:submit', started], ['driver:terminal seen', performance.now()]);
            runs.push(list);
          } catch {
            failed += 1;
          }
        }
      } finally {
        sub.unsubscribe();
      }
      return { hops: hopLatencies(runs, runs.length), workflows: runs.length, failed };
    },
    stopProcess: async (name) => {
      const found = apps.find((a) => a.name === name);
      if (!found) throw new Error(`no process ${name} in ${id}`);
      await found.app.stop();
    },
    stop: async () => {
      await bus.close().catch(() => undefined);
      await Promise.all(apps.map((a) => a.app.stop()));
      await nats.stop();
    },
  };
}

/**
 * Consecutive pairs of a workflow's events, in arrival order, with their latency percentiles: the
 * pairs seen in at least half the workflows (a rare interleaving is noise), in workflow order.
 */
export function hopLatencies(workflows: Array<Array<[string, number]>>, count: number): HopLatency[] {
  const pairs = new Map<string, { from: string; to: string; ms: number[]; order: number }>();
  for (const all of workflows) {
    all.sort((a, b) => a[1] - b[1]);
    // What trails the terminal status (the hub's later updates) is not part of the latency.
    const list = all.slice(0, all.findIndex(([label]) => label === 'driver:terminal seen') + 1);
    list.forEach(([label, t], i) => {
      if (i === 0) return;
      const [from, t0] = list[i - 1];
      const key = `${from}\u0000${label}`;
      const entry = pairs.get(key) ?? pairs.set(key, { from, to: label, ms: [], order: 0 }).get(key)!;
      entry.ms.push(t - t0);
      entry.order += i;
    });
  }
  const pct = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return [...pairs.values()]
    .filter((p) => p.ms.length >= count / 2)
    .sort((a, b) => a.order / a.ms.length - b.order / b.ms.length)
    .map((p) => {
      const sorted = p.ms.sort((a, b) => a - b);
      return { from: p.from, to: p.to, p50Ms: pct(sorted, 0.5), p90Ms: pct(sorted, 0.9), samples: sorted.length };
    });
}

/**
 * Ready means a workflow completes end to end: the hub is active and every agent consumes. (Each
 * app logs its `ready` line at info level only, and the benchmark runs them at warn.)
 */
async function waitUntilServing(client: ChorusClient, run: (seq: number) => Promise<void>, apps: Array<{ name: string; app: ChildApp }>): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (let attempt = 0; ; attempt++) {
    for (const a of apps) {
      if (a.app.child.exitCode !== null) throw new Error(`${a.name} exited (${a.app.child.exitCode}):\n${a.app.output().slice(-2000)}`);
    }
    try {
      await client.stats();
      await Promise.race([run(900_000_000 + attempt), sleep(10_000).then(() => Promise.reject(new Error('probe workflow did not finish in 10 s')))]);
      return;
    } catch (e) {
      if (Date.now() > deadline) throw new Error(`Chorus did not serve within 60 s: ${(e as Error).message}\n${apps.map((a) => `${a.name}: ${a.app.output().slice(-500)}`).join('\n')}`);
      await sleep(250);
    }
  }
}
