import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { connect as tcpConnect } from 'node:net';
import { join } from 'node:path';

export interface NatsServerOptions {
  /** The nats-server binary. */
  binary: string;
  /** Folder for the config, the ports file and (under `jetstream/`) the JetStream store. */
  dir: string;
  host: string;
  /** Client port; -1 lets the server pick a free one (read back from its ports file). */
  port: number;
  /** Extra config text appended to the generated config (cluster, accounts, …). */
  extraConfig?: string;
  /** Extra settings inside its `jetstream {}` block (`max_file_store: 2MB`, …). */
  jetstreamConfig?: string;
  /** Server name; required in a cluster. */
  serverName?: string;
  /** Where the server logs; nothing is logged when absent. */
  logFile?: string;
  /** Milliseconds to wait for the server to accept connections. */
  startTimeoutMs?: number;
  /** Keep running after this process exits (npm start's server); killed with it otherwise. */
  detached?: boolean;
}

/** Finds a runnable nats-server: the given candidates, then `nats-server` on PATH. */
export function findNatsServerBinary(candidates: Array<string | undefined> = []): string | undefined {
  for (const c of [...candidates, 'nats-server']) {
    if (!c) continue;
    const r = spawnSync(c, ['--version'], { encoding: 'utf8' });
    if (r.status === 0) return c;
  }
  return undefined;
}

/** True when something accepts TCP connections on host:port. */
export function isPortOpen(host: string, port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tcpConnect({ host, port });
    const done = (open: boolean) => {
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * A nats-server child process with JetStream, started the way nats.js's own test launcher does:
 * a generated config, a ports file read back for the actual port, and a TCP probe.
 */
export class NatsServerProcess {
  private exited: Promise<number | null>;

  private constructor(
    readonly child: ChildProcess,
    readonly options: NatsServerOptions,
    readonly port: number,
    readonly clusterPort: number | undefined,
    /** `http://<host>:<port>` of the HTTP monitoring endpoint, when the config turns it on (`http: ...`). */
    readonly monitorUrl: string | undefined,
  ) {
    this.exited = new Promise((resolve) => {
      if (child.exitCode !== null) resolve(child.exitCode);
      else child.once('exit', (code) => resolve(code));
    });
  }

  get url(): string {
    return `nats://${this.options.host}:${this.port}`;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  static async start(options: NatsServerOptions): Promise<NatsServerProcess> {
    mkdirSync(options.dir, { recursive: true });
    const storeDir = join(options.dir, 'jetstream');
    const config = [
      `listen: "${options.host}:${options.port}"`,
      options.serverName ? `server_name: "${options.serverName}"` : '',
      `jetstream { store_dir: ${JSON.stringify(storeDir)}${options.jetstreamConfig ? `, ${options.jetstreamConfig}` : ''} }`,
      options.logFile ? `log_file: ${JSON.stringify(options.logFile)}` : '',
      options.extraConfig ?? '',
    ].join('\n');
    const configFile = join(options.dir, 'nats-server.conf');
    writeFileSync(configFile, config);
    for (const f of readdirSync(options.dir)) if (f.endsWith('.ports')) writeFileSync(join(options.dir, f), '');
    const child = spawn(options.binary, ['-c', configFile, '-ports_file_dir', options.dir], {
      stdio: 'ignore',
      detached: options.detached ?? false,
    });
    if (options.detached) child.unref();
    else {
      const kill = () => child.kill('SIGKILL');
      process.once('exit', kill);
      child.once('exit', () => process.removeListener('exit', kill));
    }
    const ports = await waitForPorts(options.dir, child, options.startTimeoutMs ?? 10_000);
    const server = new NatsServerProcess(child, options, ports.client, ports.cluster, ports.monitoring);
    if (!(await waitForTcp(options.host, ports.client, options.startTimeoutMs ?? 10_000))) {
      child.kill('SIGKILL');
      throw new Error(`nats-server did not accept connections on ${options.host}:${ports.client}`);
    }
    return server;
  }

  /** Stops the server gracefully (SIGTERM), or with `signal`; resolves when it has exited. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill(signal);
    await this.exited;
  }

  /** Resolves when the process exits, with its exit code. */
  waitForExit(): Promise<number | null> {
    return this.exited;
  }
}

async function waitForPorts(dir: string, child: ChildProcess, timeoutMs: number): Promise<{ client: number; cluster?: number; monitoring?: string }> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`nats-server exited with code ${child.exitCode} before listening`);
    const name = readdirSync(dir).find((f) => f.endsWith(`_${child.pid}.ports`));
    const file = name ? join(dir, name) : '';
    if (file && existsSync(file)) {
      const text = readFileSync(file, 'utf8');
      if (text.trim()) {
        const ports = JSON.parse(text) as { nats?: string[]; cluster?: string[]; monitoring?: string[] };
        const client = ports.nats?.[0] ? Number(new URL(ports.nats[0]).port) : NaN;
        const cluster = ports.cluster?.[0] ? Number(new URL(ports.cluster[0]).port) : undefined;
        const monitoring = ports.monitoring?.[0]?.replace(/\/$/, '');
        if (Number.isFinite(client)) return { client, cluster, monitoring };
      }
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  child.kill('SIGKILL');
  throw new Error(`nats-server wrote no ports file in ${dir} within ${timeoutMs} ms`);
}

async function waitForTcp(host: string, port: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await isPortOpen(host, port)) return true;
    await new Promise((r) => setTimeout(r, 10));
  }
  return false;
}
