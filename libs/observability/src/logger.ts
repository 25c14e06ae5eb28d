import pino, { type DestinationStream, type Logger as PinoLogger } from 'pino';

export type Logger = PinoLogger;

export interface LoggerOptions {
  /** The process or app name, bound as `app` on every line. */
  name: string;
  /** pino level: fatal, error, warn, info, debug, trace or silent. */
  level: string;
  /** Where lines go; stdout when absent. Tests pass a capture stream. */
  destination?: DestinationStream;
}

export function defaultLoggerOptions(name: string): LoggerOptions {
  return { name, level: 'info' };
}

/** The one root logger of a process; everything else is a child of it. */
export function createRootLogger(options: LoggerOptions): Logger {
  return pino(
    { level: options.level, base: { app: options.name }, timestamp: pino.stdTimeFunctions.isoTime },
    options.destination ?? pino.destination({ sync: false }),
  );
}

/** The fields every log line about an envelope carries, so one workflow joins across apps. */
export interface EnvelopeLogBindings {
  correlation_id: string;
  causation_id?: string | null;
  message_id?: string;
  subject?: string;
  agent?: string;
  message_type?: string;
}

export function createEnvelopeLogger(parent: Logger, bindings: EnvelopeLogBindings): Logger {
  return parent.child(bindings);
}

/**
 * `fields` less those `log` already binds to the same value. pino writes a key once for each time
 * it is bound, so a field bound again (an app's `agent`, a workflow's `correlation_id`) appeared
 * twice on the line, which some log pipelines refuse or read differently.
 */
export function unbound<T extends object>(log: Logger, fields: T): Partial<T> {
  const bound = log.bindings() as Record<string, unknown>;
  return Object.fromEntries(Object.entries(fields).filter(([key, value]) => bound[key] !== value)) as Partial<T>;
}
