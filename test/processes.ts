import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

export interface AppProcess {
  child: ChildProcess;
  output: () => string;
  /** Resolves with the first match of `pattern` in the output. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Runs a compiled app (`dist/apps/<app>/src/main.js`) as its own process. */
export function startApp(app: string, env: Record<string, string>): AppProcess {
  const main = join(__dirname, '..', 'dist', 'apps', app, 'src', 'main.js');
  const child = spawn(process.execPath, [main], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const listeners = new Set<() => void>();
  const onData = (d: Buffer) => {
    out += d.toString();
    for (const l of listeners) l();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    output: () => out,
    waitFor: (pattern, timeoutMs = 20_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const m = out.match(pattern);
          if (m) {
            listeners.delete(check);
            clearTimeout(timer);
            resolve(m);
          }
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`${app}: no ${pattern} within ${timeoutMs} ms; output:\n${out.slice(-3000)}`));
        }, timeoutMs);
        listeners.add(check);
        check();
        void exited.then((code) => {
          if (listeners.has(check)) {
            listeners.delete(check);
            clearTimeout(timer);
            reject(new Error(`${app} exited (${code}) before ${pattern}; output:\n${out.slice(-3000)}`));
          }
        });
      }),
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
