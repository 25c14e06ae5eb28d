import { format } from 'node:util';
import { A2AError, InvalidAgentResponseError } from '@a2a-js/sdk/errors';
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
 * Its calls go to `log` instead, one JSON line each (`source: "@a2a-js/sdk"`, the text in `msg`;
 * one about a request it refused with an A2A error at info, named, without its stack);
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
      // A request refused as A2A has it (an unknown task, a finished one, an unsupported operation)
      // was answered with that error: the client's mistake, not the server's, so no error and no stack.
      const refusal = args.find((a): a is A2AError => a instanceof A2AError && !(a instanceof InvalidAgentResponseError));
      if (refusal) {
        log.info({ source: '@a2a-js/sdk', error_type: refusal.name }, format(...args.map((a) => (a === refusal ? `${refusal.name}: ${refusal.message}` : a))));
        return;
      }
      log[level]({ source: '@a2a-js/sdk' }, format(...args));
    };
  }
}
