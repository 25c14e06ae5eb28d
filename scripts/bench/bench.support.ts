import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { startNats, type NatsHandle } from '@chorus/testing';

/**
 * The repository root: this file runs from dist/scripts/bench/, or from a snapshot of dist (see
 * snapshotDist), whose processes are told the root by the process that started them.
 */
export const REPO_ROOT = process.env.CHORUS_BENCH_ROOT ?? join(__dirname, '..', '..', '..');

/** A compiled Chorus entry point started as its own process (`dist/apps/<app>/src/main.js`). */
export interface ChildApp {
  child: ChildProcess;
  output(): string;
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export function spawnApp(app: string, env: Record<string, string>): ChildApp {
  return spawnScript(join(distRoot, 'apps', app, 'src', 'main.js'), [], env, app);
}

/** A baseline's hop process (hop-worker.js), from the same build as the apps. */
export function spawnHopWorker(args: string[], env: Record<string, string>, name: string): ChildApp {
  return spawnScript(join(distRoot, 'scripts', 'bench', 'hop-worker.js'), args, env, name);
}

// Where spawned processes load their code from: dist/, or a private copy of it (snapshotDist).
let distRoot = join(__dirname, '..', '..');

/**
 * Copies the compiled apps, libs and benchmark into artifacts/bench/ and starts every later process
 * from that copy (removed on exit), so a long run measures one build even when someone rebuilds
 * dist/ meanwhile. Inside the repository, so the copy still resolves node_modules.
 */
export function snapshotDist(): string {
  const source = join(__dirname, '..', '..');
  const copy = join(REPO_ROOT, 'artifacts', 'bench', `dist-${process.pid}`);
  for (const part of ['apps', 'libs', 'scripts']) cpSync(join(source, part), join(copy, part), { recursive: true });
  process.once('exit', () => {
    try {
      rmSync(copy, { recursive: true, force: true });
    } catch {
      // Left in artifacts/ (ignored by git); the next run does not need it.
    }
  });
  distRoot = copy;
  return copy;
}

/**
 * Any Node script as a child process, from the repository root (where Chorus finds its default
 * corpus). BENCH_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=artifacts/prof") is passed to every
 * process a benchmark starts, to profile them.
 */
export function spawnScript(script: string, args: string[], env: Record<string, string>, name = script): ChildApp {
  const app = name;
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, script, ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, CHORUS_BENCH_ROOT: REPO_ROOT, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  killOnExit(child);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-200_000)));
  child.stderr!.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-200_000)));
  return {
    child,
    output: () => out,
    waitFor: async (pattern, timeoutMs = 30_000) => {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const m = out.match(pattern);
        if (m) return m;
        if (child.exitCode !== null) throw new Error(`${app} exited (${child.exitCode}):\n${out.slice(-2000)}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error(`${app}: no ${pattern} within ${timeoutMs} ms:\n${out.slice(-2000)}`);
    },
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill(signal);
      const force = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(force);
    },
  };
}

// A benchmark that crashes or is interrupted must not leave its systems running, nor a JetStream
// store (gigabytes after a long run) in the temp folder: processes are killed first, then stores go.
const children = new Set<ChildProcess>();
const stores = new Set<string>();
let exitHookInstalled = false;
function cleanUpOnExit(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const c of children) c.kill('SIGKILL');
    for (const d of stores) {
      try {
        rmSync(d, { recursive: true, force: true });
      } catch {
        // A store the killed server was still writing; the temp folder keeps it.
      }
    }
  });
}

function killOnExit(child: ChildProcess): void {
  cleanUpOnExit();
  children.add(child);
  child.once('exit', () => children.delete(child));
}

function removeOnExit(dir: string): void {
  cleanUpOnExit();
  stores.add(dir);
}

/** Resident set size of a process, in MiB, from /proc (Linux). */
export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1] ?? NaN);
  return kb / 1024;
}

/**
 * Parses `--name value` flags with defaults. Where `help` is not one of them, `--help` prints the
 * options with their defaults and exits 0, and an unknown option is a usage error (exit 2), not a
 * stack trace; where it is, the caller answers both.
 */
export function flags<T extends Record<string, string>>(defaults: T, argv = process.argv.slice(2)): T {
  const out: Record<string, string> = { ...defaults };
  const known = () => Object.entries(defaults).map(([k, v]) => `--${k}${v ? ` (default ${v})` : ''}`).join(', ');
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('--')) continue;
    const key = a.slice(2);
    if (!('help' in defaults) && (key === 'help' || !(key in defaults))) {
      if (key === 'help') console.log(`options: ${known()}`);
      else console.error(`unknown option ${a}; options: ${known()}`);
      process.exit(key === 'help' ? 0 : 2);
    }
    if (!(key in defaults)) throw new Error(`unknown option ${a}; known: ${Object.keys(defaults).map((k) => `--${k}`).join(' ')}`);
    const next = argv[i + 1];
    if (next === undefined || next.startsWith('--')) out[key] = 'true';
    else out[key] = argv[++i];
  }
  return out as T;
}

/** A fresh nats-server (JetStream, temporary store) with its HTTP monitoring endpoint. */
export interface BenchNats {
  handle: NatsHandle;
  url: string;
  pid: number;
  /** `http://127.0.0.1:<port>`, serving `/varz`. */
  monitorUrl: string;
  stop(): Promise<void>;
}

export async function startBenchNats(): Promise<BenchNats> {
  const handle = await startNats({ monitoring: true }).catch((e: unknown) => {
    throw new Error(`the benchmark needs the nats-server binary (it reads the server's CPU and traffic counters): ${String(e)}`);
  });
  const { server, dir, monitorUrl } = handle;
  if (!server || !dir || !monitorUrl) {
    await handle.stop();
    throw new Error(`nats-server wrote no monitoring port${dir ? ` in ${dir}` : ''}`);
  }
  const pid = server.pid!;
  killOnExit(server.child);
  removeOnExit(dir);
  return { handle, url: handle.url, pid, monitorUrl, stop: () => handle.stop() };
}
