import { format } from 'node:util';
import type { Logger } from '@chorus/observability';

/** Where the A2A SDK's code lives: its console calls come from a frame there. */
const SDK_PATH = 'node_modules/@a2a-js/sdk/';
const LEVELS = { error: 'error', warn: 'warn', info: 'info', log: 'info', debug: 'debug' } as const;
/** Marks the console once routed: the console is the process's, and so is this routing. */
const ROUTED = Symbol.for('chorus.a2a-sdk-console-routed');

/**
 * @a2a-js/sdk reports what goes wrong in a request it refuses or a stream it ends with console.error
 * and console.warn (`Pre-stream error …`, `Error during SSE streaming …`, stack and all) and takes no
 * logger: multi-line text among the process's JSON log lines, which a log pipeline cannot parse.
 * Its calls go to `log` instead, one JSON line each (`source: "@a2a-js/sdk"`, the text in `msg`);
 * everyone else's console calls are left as they are. The caller is found from the stack, which
 * costs a few microseconds, on console calls only. Installed once per process: the first ingress's
 * logger takes them (one per process in every deployment).
 */
export function routeSdkConsoleToLog(log: Logger): void {
  const marked = console as Console & { [ROUTED]?: true };
  if (marked[ROUTED]) return;
  marked[ROUTED] = true;
  for (const [method, level] of Object.entries(LEVELS) as Array<[keyof typeof LEVELS, (typeof LEVELS)[keyof typeof LEVELS]]>) {
    const original = console[method].bind(console);
    console[method] = (...args: unknown[]) => {
      // This wrapper's frame, then its caller's.
      const caller = new Error().stack?.split('\n')[2] ?? '';
      if (!caller.includes(SDK_PATH)) return original(...args);
      log[level]({ source: '@a2a-js/sdk' }, format(...args));
    };
  }
}
