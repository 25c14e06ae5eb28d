import { startOpsServer, type Logger } from '@chorus/observability';
import type { BusOptions } from './bus.options';
import { Bus } from './nats.bus';
import { retryTransient } from './transient-error';

export interface ProcessOptions {
  /** Exit the process after a graceful shutdown on SIGINT/SIGTERM (default true). */
  exitOnSignal?: boolean;
  /** Runs after the bus is drained (e.g. stop a nats-server the process started). */
  afterShutdown?: () => Promise<void>;
  /** Track finished workflows so agents skip them (default true; the hub needs not). */
  trackFinished?: boolean;
  /** Serve /health, /ready and /metrics on this address. */
  ops?: { host: string; port: number };
}

/** Something a process starts and must stop on shutdown. */
export interface Component {
  readonly name: string;
  close(): Promise<void>;
}

export interface RunningProcess {
  bus: Bus;
  components: Component[];
  /** Stops the components (last started first), then drains the bus. Idempotent. */
  shutdown(reason: string): Promise<void>;
}

/**
 * Connects, ensures the streams, starts each component, and wires SIGINT/SIGTERM to a graceful
 * shutdown. Each component starts in isolation: one that fails to start is logged and reported,
 * and does not stop the others (an earlier system let one broken agent take down all of them).
 */
export async function runProcess(
  log: Logger,
  busOptions: BusOptions,
  starters: Array<{ name: string; start: (bus: Bus) => Promise<Component> }>,
  options: ProcessOptions = {},
): Promise<RunningProcess & { failed: Array<{ name: string; error: unknown }> }> {
  const bus = await Bus.connect(busOptions, log, { trackFinished: options.trackFinished ?? true });
  // A cluster still electing its stream leaders, or one busy, times out requests for a while: the
  // process waits for it (about half a minute) rather than exiting.
  await retryTransient(() => bus.ensureTopology(), log, 'creating the streams');
  const components: Component[] = [];
  const failed: Array<{ name: string; error: unknown }> = [];
  for (const starter of starters) {
    try {
      // Not retried as a whole (a half-started component would be started twice): the steps that
      // wait on NATS (creating streams, consumers, buckets) retry transient errors themselves.
      components.push(await starter.start(bus));
    } catch (error) {
      log.error({ err: error, component: starter.name }, `${starter.name} failed to start`);
      failed.push({ name: starter.name, error });
    }
  }
  if (options.ops) {
    const ops = await startOpsServer(options.ops, bus.metrics, () => bus.readiness(), log);
    components.push({ name: 'ops', close: () => ops.close() });
  }
  let stopping: Promise<void> | undefined;
  // Removed once shut down (a signal meanwhile still shuts down gracefully): a process that runs
  // many of these in turn (tests, the cluster scripts) would otherwise keep one listener per run on
  // each signal and warn of a listener leak.
  const onSignal = new Map<NodeJS.Signals, () => void>();
  const shutdown = (reason: string) => {
    stopping ??= (async () => {
      log.info({ reason }, 'shutting down');
      try {
        for (const c of [...components].reverse()) {
          try {
            await c.close();
          } catch (e) {
            log.warn({ err: e, component: c.name }, 'component did not close cleanly');
          }
        }
        await bus.close();
        await options.afterShutdown?.();
      } finally {
        for (const [signal, listener] of onSignal) process.removeListener(signal, listener);
        onSignal.clear();
      }
      log.info('stopped');
    })();
    return stopping;
  };
  if (options.exitOnSignal ?? true) {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      const listener = () => {
        void shutdown(signal).finally(() => {
          log.flush?.();
          // 0, or the code the launcher set (1 after a start in which an app failed).
          process.exit();
        });
      };
      onSignal.set(signal, listener);
      process.once(signal, listener);
    }
  }
  return { bus, components, failed, shutdown };
}

/** Runs one app as its own process; a start failure shuts down and rethrows (the caller exits 1). */
export async function runStandalone(
  log: Logger,
  busOptions: BusOptions,
  starter: { name: string; start: (bus: Bus) => Promise<Component> },
  options: ProcessOptions = {},
): Promise<RunningProcess> {
  const running = await runProcess(log, busOptions, [starter], options);
  if (running.failed.length > 0) {
    await running.shutdown('failed to start');
    throw running.failed[0].error;
  }
  log.info(`${starter.name} ready`);
  return running;
}

/**
 * For a command whose output may be piped: a reader that stops reading (`… | head -1`) closes the
 * pipe, its choice and not a failure, so the process ends quietly with exit code 0 (its 'exit'
 * handlers still run: children it started are stopped) instead of dying of an unhandled EPIPE.
 * A closed stderr only loses the messages: the command goes on to its own exit code.
 */
export function endQuietlyWhenOutputCloses(): void {
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') throw e;
    process.exit(0);
  });
  process.stderr.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') throw e;
  });
}
