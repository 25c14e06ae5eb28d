/**
 * The Chorus an evaluation runs against: its own nats-server, the agents in one all-in-one process
 * (without the ingress), and the profiles as their own processes (`bm25`/`trigram` in one, and
 * `wordvec` in another when evaluated, since its word vectors take seconds and a gigabyte to load).
 * Every query then crosses the real bus: query -> intent -> planner -> search (fan-out to the
 * profile services, RRF) -> responder, recorded by the hub.
 */
import { Bus, ChorusClient, ProfileClient, defaultBusOptions } from '@chorus/bus';
import { PROFILE_ENGINE_RESOURCES, isProfileEngineName } from '@chorus/profiles';
import type { Logger } from '@chorus/observability';
import { startNats, type NatsHandle } from '@chorus/testing';
import { spawnApp, type ChildApp } from '../bench/bench.support';
import type { ProcessTable } from './eval.cpu';

export interface FusionSettings {
  k: number;
  rankWindow: number;
  weights: Record<string, number>;
}

export interface SystemOptions {
  corpus: string;
  /** Every profile the deployment runs (and the planner may choose). */
  profiles: readonly string[];
  fusion: FusionSettings;
  /** Extra environment for every Chorus process (CHORUS_PROFILE_TIMEOUT_MS, ...). */
  env?: Record<string, string>;
  /** How long to wait for the profiles (word vectors included) to answer. */
  startTimeoutMs: number;
}

export interface EvalSystem {
  client: ChorusClient;
  /** The system's processes by name (the eval driver, this process, included), to meter their CPU. */
  processes: ProcessTable;
  /** Milliseconds from spawning the processes until every profile answered. */
  startMs: number;
  stop(): Promise<void>;
}

/** Starts everything and waits until the hub and every profile answer. Stops what it started if that fails. */
export async function startEvalSystem(options: SystemOptions, log: Logger): Promise<EvalSystem> {
  const unknown = options.profiles.filter((p) => !isProfileEngineName(p));
  if (unknown.length > 0) throw new Error(`unknown profile(s): ${unknown.join(', ')}`);
  const started = Date.now();
  const apps: ChildApp[] = [];
  let nats: NatsHandle | undefined;
  let bus: Bus | undefined;
  const stop = async (): Promise<void> => {
    await bus?.close().catch(() => undefined);
    await Promise.all(apps.map((a) => a.stop()));
    await nats?.stop();
  };
  try {
    nats = await startNats({ own: true });
    const env: Record<string, string> = {
      NATS_URL: nats.url,
      CHORUS_LOG_LEVEL: 'warn',
      CHORUS_CORPUS: options.corpus,
      CHORUS_PROFILES: options.profiles.join(','),
      CHORUS_RRF_K: String(options.fusion.k),
      CHORUS_RANK_WINDOW: String(options.fusion.rankWindow),
      CHORUS_RRF_WEIGHTS: Object.entries(options.fusion.weights).map(([p, w]) => `${p}=${w}`).join(','),
      ...options.env,
    };
    if (env.CHORUS_RRF_WEIGHTS === '') delete env.CHORUS_RRF_WEIGHTS;
    // Profiles that need a resource get a process of their own, so the others serve at once.
    const heavy = options.profiles.filter((p) => isProfileEngineName(p) && PROFILE_ENGINE_RESOURCES[p].length > 0);
    const light = options.profiles.filter((p) => !heavy.includes(p));
    const processes: ProcessTable = { 'nats-server': nats.server?.pid };
    for (const group of [light, heavy]) {
      if (group.length === 0) continue;
      const app = spawnApp('profile', { ...env, CHORUS_PROFILES: group.join(',') });
      apps.push(app);
      processes[`profile(${group.join(',')})`] = app.child.pid;
    }
    const agents = spawnApp('chorus', { ...env, CHORUS_APPS: 'hub,intent,planner,search,responder' });
    apps.push(agents);
    processes['agents(hub,intent,planner,search,responder)'] = agents.child.pid;
    processes['eval driver'] = process.pid;
    bus = await Bus.connect({ ...defaultBusOptions(), servers: [nats.url], name: 'chorus-eval' }, log);
    const client = new ChorusClient(bus, {
      agent: 'eval',
      correlation: { strategy: 'uuidv7', secret: 'eval' },
      defaultDeadlineMs: 60_000,
      defaultTopK: 100,
      requestTimeoutMs: 10_000,
      terminalGraceMs: 2_000,
    });
    await agents.waitFor(/Chorus ready/, options.startTimeoutMs);
    const deadline = started + options.startTimeoutMs;
    await waitUntil(() => client.stats().then(() => true, () => false), deadline, 'the hub', apps);
    const profiles = new ProfileClient(bus);
    for (const profile of options.profiles) {
      const answers = () => profiles.search(profile, { text: 'probe', limit: 1 }, 1_000).then(() => true, () => false);
      await waitUntil(answers, deadline, `profile ${profile}`, apps);
    }
    return { client, processes, startMs: Date.now() - started, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function waitUntil(probe: () => Promise<boolean>, deadline: number, what: string, apps: readonly ChildApp[]): Promise<void> {
  while (Date.now() < deadline) {
    if (await probe()) return;
    const dead = apps.find((a) => a.child.exitCode !== null);
    if (dead) throw new Error(`a Chorus process exited (${dead.child.exitCode}) while waiting for ${what}:\n${dead.output().slice(-2000)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const output = apps.map((a) => a.output().slice(-1000)).join('\n---\n');
  throw new Error(`timed out waiting for ${what}\n${output}`);
}
