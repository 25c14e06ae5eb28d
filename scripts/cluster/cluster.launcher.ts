import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Bus, NatsServerProcess, defaultBusOptions, findNatsServerBinary } from '@chorus/bus';
import { createRootLogger } from '@chorus/observability';

/** A three-node NATS cluster with JetStream on loopback ports. */
export interface NatsCluster {
  nodes: NatsServerProcess[];
  /** Client URLs of every node, for NATS_URL. */
  urls: string[];
  /** Starts a stopped node again (same name, ports and store). */
  restart(index: number): Promise<void>;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Starts three clustered nats-server processes and waits until JetStream has a meta leader. */
export async function startNatsCluster(dir: string, options: { size?: number; binary?: string } = {}): Promise<NatsCluster> {
  const size = options.size ?? 3;
  const binary = options.binary ?? findNatsServerBinary([process.env.NATS_SERVER_BIN]);
  if (!binary) throw new Error('nats-server is not on PATH (Debian/Ubuntu: apt-get install nats-server)');
  const clientPorts = await Promise.all(Array.from({ length: size }, freePort));
  const routePorts = await Promise.all(Array.from({ length: size }, freePort));
  const configOf = (i: number) => ({
    binary,
    dir: join(dir, `n${i + 1}`),
    host: '127.0.0.1',
    port: clientPorts[i],
    serverName: `chorus-n${i + 1}`,
    logFile: join(dir, `n${i + 1}`, 'nats-server.log'),
    extraConfig: [
      'cluster {',
      '  name: chorus',
      `  listen: 127.0.0.1:${routePorts[i]}`,
      `  routes: [${routePorts.map((p) => `nats-route://127.0.0.1:${p}`).join(', ')}]`,
      '}',
    ].join('\n'),
  });
  for (let i = 0; i < size; i++) mkdirSync(configOf(i).dir, { recursive: true });
  const nodes = await Promise.all(Array.from({ length: size }, (_, i) => NatsServerProcess.start(configOf(i))));
  const urls = clientPorts.map((p) => `nats://127.0.0.1:${p}`);
  await waitForJetStream(urls);
  return {
    nodes,
    urls,
    restart: async (i) => {
      nodes[i] = await NatsServerProcess.start(configOf(i));
      await waitForJetStream(urls);
    },
    stop: async () => {
      await Promise.all(nodes.map((n) => n.stop()));
    },
  };
}

/** Until the cluster's JetStream answers (it has elected a meta leader). */
async function waitForJetStream(urls: string[], timeoutMs = 30_000): Promise<void> {
  const log = createRootLogger({ name: 'cluster', level: 'silent' });
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const bus = await Bus.connect({ ...defaultBusOptions(), servers: urls, name: 'cluster-probe', requestTimeoutMs: 2000 }, log);
      try {
        await bus.jsm.getAccountInfo();
        return;
      } finally {
        await bus.close();
      }
    } catch (e) {
      last = e;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  throw new Error(`the cluster's JetStream did not come up within ${timeoutMs} ms: ${String(last)}`);
}

/** One app process of a cluster deployment. */
export interface AppProcess {
  app: string;
  replica: number;
  child: ChildProcess;
  output(): string;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** Runs a compiled app (`dist/apps/<app>/src/main.js`) as its own process, its output kept. */
export function spawnApp(root: string, app: string, replica: number, env: Record<string, string>, logDir?: string): AppProcess {
  const child = spawn(process.execPath, [join(root, 'dist', 'apps', app, 'src', 'main.js')], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  // The last 100 KB in memory (to wait for start-up lines); everything in `<logDir>/<app>-<replica>.log` when given.
  // A fresh file per run; ended once the child's output is closed ('close', not 'exit': output can
  // still arrive after the exit), and a write error (a full disk) never takes the launcher down.
  const log = logDir ? createWriteStream(join(logDir, `${app}-${replica}.log`)) : undefined;
  log?.on('error', () => undefined);
  const keep = (d: Buffer) => {
    if (log?.writable) log.write(d);
    out = (out + d.toString()).slice(-100_000);
  };
  child.once('close', () => log?.end());
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    app,
    replica,
    child,
    output: () => out,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

/** Waits until `pattern` appears in an app's output. */
export async function waitForOutput(p: AppProcess, pattern: RegExp, timeoutMs = 60_000): Promise<RegExpMatchArray> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const m = p.output().match(pattern);
    if (m) return m;
    if (p.child.exitCode !== null) throw new Error(`${p.app}#${p.replica} exited (${p.child.exitCode}):\n${p.output().slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${p.app}#${p.replica}: no ${pattern} within ${timeoutMs} ms:\n${p.output().slice(-2000)}`);
}

export interface ChorusDeployment {
  apps: AppProcess[];
  /** The ingress's URL. */
  url: string;
  stop(): Promise<void>;
}

/**
 * Chorus as one process per app against `urls`: the hub first (it creates the streams), then the
 * profiles and agents (`replicas` of each), then the ingress.
 */
export async function startDeployment(root: string, urls: string[], options: { replicas: number; env?: Record<string, string>; logDir?: string }): Promise<ChorusDeployment> {
  const env = { NATS_URL: urls.join(','), CHORUS_LOG_LEVEL: 'info', CHORUS_HTTP_PORT: '0', ...(options.env ?? {}) };
  const apps: AppProcess[] = [];
  if (options.logDir) mkdirSync(options.logDir, { recursive: true });
  const start = (app: string, replica: number) => {
    const p = spawnApp(root, app, replica, env, options.logDir);
    apps.push(p);
    return p;
  };
  try {
    const hubs = Array.from({ length: options.replicas }, (_, i) => start('hub', i + 1));
    await Promise.all(hubs.map((h) => waitForOutput(h, /hub ready/)));
    const agents = ['profile', 'intent', 'planner', 'search', 'responder'].flatMap((app) => Array.from({ length: options.replicas }, (_, i) => start(app, i + 1)));
    await Promise.all(agents.map((a) => waitForOutput(a, / ready"/)));
    const ingress = start('ingress', 1);
    const [, url] = await waitForOutput(ingress, /"url":"(http:\/\/[^"]+)","msg":"ingress listening"/);
    await waitForOutput(ingress, /ingress ready/);
    return { apps, url, stop: async () => void (await Promise.all(apps.map((a) => a.stop()))) };
  } catch (e) {
    await Promise.all(apps.map((a) => a.stop('SIGKILL')));
    throw e;
  }
}
