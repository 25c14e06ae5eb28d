import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { REPO_ROOT, spawnHopWorker, startBenchNats, type ChildApp } from './bench.support';
import { PendingWorkflows } from './load';
import type { SystemId, SystemUnderTest } from './system.types';
import { AGENT_HOPS, createRequest, nextHop, type BenchMessage, type HopStep, type HopWork } from './workload';

/**
 * The peer: the same choreography on Moleculer with its NATS transporter. Each hop is a service
 * (on its own broker, so the hop crosses NATS) with one event handler that emits the next event,
 * balanced to one listener; Moleculer frames every event as a JSON packet with its own metadata.
 * Core NATS underneath: no durability, no dedup.
 *
 * Moleculer lives in its own little package, scripts/bench/peer-deps, installed on first use:
 * 0.14.36 is the newest Moleculer that supports Node 20 (0.15 declares Node >= 22), its optional
 * peer pino (<= 9) conflicts with Chorus's pino 10, and its transporter needs the legacy `nats` 2.x
 * client, which Chorus itself does not use.
 */
export const PEER_DEPS_DIR = join(REPO_ROOT, 'scripts', 'bench', 'peer-deps');

interface MoleculerContext {
  params: BenchMessage;
}
interface ServiceBroker {
  start(): Promise<void>;
  stop(): Promise<void>;
  createService(schema: { name: string; events: Record<string, (ctx: MoleculerContext) => unknown> }): unknown;
  emit(event: string, data: unknown): Promise<void>;
  waitForServices(names: string[], timeoutMs?: number): Promise<void>;
}
interface MoleculerModule {
  ServiceBroker: { new (options: object): ServiceBroker; MOLECULER_VERSION: string };
}

/** Installs scripts/bench/peer-deps when it is not yet; returns why it could not, or null. */
export function ensurePeerDeps(): string | null {
  if (existsSync(join(PEER_DEPS_DIR, 'node_modules', 'moleculer')) && existsSync(join(PEER_DEPS_DIR, 'node_modules', 'nats'))) return null;
  console.log(`installing the Moleculer peer: npm ci --prefix ${PEER_DEPS_DIR}`);
  const r = spawnSync('npm', ['ci', '--prefix', PEER_DEPS_DIR, '--no-audit', '--no-fund', '--loglevel=error'], { stdio: 'inherit' });
  return r.status === 0 ? null : `npm ci in ${PEER_DEPS_DIR} failed (exit ${r.status})`;
}

export function loadMoleculer(): MoleculerModule {
  return createRequire(join(PEER_DEPS_DIR, 'package.json'))('moleculer') as MoleculerModule;
}

function createBroker(nodeID: string, url: string): ServiceBroker {
  const { ServiceBroker } = loadMoleculer();
  // Stock settings apart from the log level: JSON serializer, balanced events, no metrics or tracing.
  return new ServiceBroker({ nodeID, transporter: { type: 'NATS', options: { url } }, logger: { type: 'Console', options: { level: 'warn' } } });
}

/**
 * The hop side (runs in hop-worker): one broker (node) per hop, each with its own NATS connection.
 * With one broker for all hops, Moleculer would call the next hop's handler in-process and only
 * the first and last messages would cross NATS; every other system here sends each hop over the bus.
 */
export async function startMoleculerHops(url: string, applyHop: HopStep): Promise<() => Promise<void>> {
  const brokers = AGENT_HOPS.map((hop) => {
    const broker = createBroker(`mol-${hop}-${process.pid}`, url);
    broker.createService({
      name: `hop-${hop}`,
      events: { [`mol.${hop}`]: (ctx) => broker.emit(`mol.${nextHop(hop)}`, applyHop(ctx.params, hop)) },
    });
    return broker;
  });
  await Promise.all(brokers.map((b) => b.start()));
  await Promise.all(brokers.map((b) => b.waitForServices(['bench-driver', ...AGENT_HOPS.map((h) => `hop-${h}`)], 30_000)));
  return async () => {
    await Promise.all(brokers.map((b) => b.stop()));
  };
}

export async function startMoleculerSystem(id: SystemId = 'moleculer', work: HopWork = 'trivial'): Promise<SystemUnderTest> {
  const problem = ensurePeerDeps();
  if (problem) throw new Error(problem);
  const nats = await startBenchNats();
  const pending = new PendingWorkflows(30_000);
  const driver = createBroker(`bench-driver-${process.pid}`, nats.url);
  driver.createService({ name: 'bench-driver', events: { 'mol.done': (ctx) => pending.settle(ctx.params.id) } });
  let worker: ChildApp | undefined;
  try {
    await driver.start();
    worker = spawnHopWorker(['moleculer', AGENT_HOPS.join(','), work], { NATS_URL: nats.url }, 'moleculer hops');
    await worker.waitFor(/hops ready/);
    await driver.waitForServices(AGENT_HOPS.map((h) => `hop-${h}`), 30_000);
    const tag = Date.now().toString(36);
    let next = 0; // ids stay unique across load levels (the JetStream floor deduplicates on them)
    const w = worker;
    return {
      id,
      url: nats.url,
      monitorUrl: nats.monitorUrl,
      processes: () => ({ 'nats-server': nats.pid, hops: w.child.pid }),
      notes: async () => [`moleculer ${loadMoleculer().ServiceBroker.MOLECULER_VERSION}`],
      run: async (seq) => {
        const id = `${tag}-${next++}`;
        const done = pending.wait(id);
        await driver.emit('mol.intent', createRequest(id, seq));
        await done;
      },
      stop: async () => {
        await w.stop();
        await driver.stop();
        await nats.stop();
      },
    };
  } catch (e) {
    await worker?.stop();
    await driver.stop().catch(() => undefined);
    await nats.stop();
    throw e;
  }
}
