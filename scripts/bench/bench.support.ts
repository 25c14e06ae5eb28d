import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A compiled Chorus entry point started as its own process (`dist/apps/<app>/src/main.js`). */
export interface ChildApp {
  child: ChildProcess;
  output(): string;
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

export function spawnApp(app: string, env: Record<string, string>): ChildApp {
  const main = join(__dirname, '..', '..', 'apps', app, 'src', 'main.js');
  // BENCH_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=prof") profiles the apps a benchmark starts.
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, main], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
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
      await exited;
    },
  };
}

/** Resident set size of a process, in MiB, from /proc (Linux). */
export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1] ?? NaN);
  return kb / 1024;
}

/** Parses `--name value` flags with defaults. */
export function flags<T extends Record<string, string>>(defaults: T, argv = process.argv.slice(2)): T {
  const out: Record<string, string> = { ...defaults };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('--')) continue;
    const key = a.slice(2);
    if (!(key in defaults)) throw new Error(`unknown option ${a}; known: ${Object.keys(defaults).map((k) => `--${k}`).join(' ')}`);
    const next = argv[i + 1];
    if (next === undefined || next.startsWith('--')) out[key] = 'true';
    else out[key] = argv[++i];
  }
  return out as T;
}
