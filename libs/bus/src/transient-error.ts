import { JetStreamApiError, JetStreamError } from '@nats-io/jetstream';
import {
  ClosedConnectionError,
  ConnectionError,
  DrainingConnectionError,
  NoRespondersError,
  PermissionViolationError,
  RequestError,
  TimeoutError,
} from '@nats-io/transport-node';
import { ChorusError } from '@chorus/envelope';
import type { Logger } from '@chorus/observability';

/**
 * True for an error of the infrastructure that retrying can get past: NATS disconnected, a request or
 * a JetStream publish timed out or found no responders (a restarting server, a cluster electing a
 * leader), a revision conflict. A handler's own errors decide for themselves (ChorusError.retryable);
 * anything else (a bug, a subject the NATS user may not use) is not retried.
 */
export function isTransient(error: unknown): boolean {
  if (error instanceof ChorusError) return error.retryable;
  // A permission violation fails a request too: a misconfigured user, not NATS being away.
  if (error instanceof PermissionViolationError || (error instanceof Error && error.cause instanceof PermissionViolationError)) return false;
  if (natsOutageKind(error) !== null) return true;
  return isRevisionConflict(error) || /timeout|timed out|no responders|disconnect|connection (closed|lost)|jetstream (not|is not) (enabled|available)/i.test(String((error as Error)?.message ?? ''));
}

/**
 * How NATS failed a call, when it is NATS being away or slow (not a revision conflict, not a
 * handler's own error, whatever its message says): `timeout` or `unavailable`; null otherwise.
 */
export function natsOutageKind(error: unknown): 'timeout' | 'unavailable' | null {
  const e = error instanceof RequestError && error.cause instanceof Error ? error.cause : error;
  if (e instanceof TimeoutError) return 'timeout';
  if (error instanceof RequestError) return 'unavailable';
  // 503 (no JetStream leader right now), 408/504 timeouts, 429 too many requests.
  if (e instanceof JetStreamApiError) return e.status === 408 || e.status === 504 ? 'timeout' : e.status === 503 || e.status === 429 ? 'unavailable' : null;
  if (e instanceof NoRespondersError || e instanceof ConnectionError || e instanceof ClosedConnectionError || e instanceof DrainingConnectionError || e instanceof JetStreamError) return 'unavailable';
  return null;
}

/**
 * Retries an operation while it fails for reasons NATS recovers from (a JetStream leader election,
 * a reconnect, a timeout under load): `attempts` tries (12 by default), backing off from 100 ms to
 * 5 s, about half a minute in all. Anything else, or the last failure, is thrown.
 */
export async function retryTransient<T>(op: () => Promise<T>, log: Logger, what: string, attempts = 12): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await op();
    } catch (e) {
      if (attempt >= attempts || !isTransient(e)) throw e;
      const delay = Math.min(5000, 100 * 2 ** (attempt - 1));
      log.warn({ err: e, attempt, retry_in_ms: delay }, `${what} failed; NATS may be away, retrying`);
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}

/**
 * True when JetStream refused for want of storage: a publish it has no room for ("insufficient
 * resources", err_code 10023), or a stream whose byte limit it cannot set aside ("insufficient
 * storage resources available").
 */
export function isStorageExhausted(e: unknown): boolean {
  return (e instanceof JetStreamApiError && e.code === 10023) || /insufficient (storage )?resources/i.test(String((e as Error)?.message ?? ''));
}

/** True when JetStream has no stream of that name (err_code 10059): on a server Chorus never ran against, its streams. */
export function isStreamMissing(e: unknown): boolean {
  return e instanceof JetStreamApiError && e.code === 10059;
}

/** True when a create/update failed because the key changed (or exists) meanwhile. */
export function isRevisionConflict(e: unknown): boolean {
  return /wrong last sequence|key exists/i.test(String((e as Error)?.message ?? e));
}
