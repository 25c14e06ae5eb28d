import { JetStreamApiError, JetStreamError } from '@nats-io/jetstream';
import {
  ClosedConnectionError,
  ConnectionError,
  DrainingConnectionError,
  NoRespondersError,
  RequestError,
  TimeoutError,
} from '@nats-io/transport-node';
import { ChorusError } from '@chorus/envelope';
import { isRevisionConflict } from './kv.store';

/**
 * True for an error of the infrastructure that retrying can get past: NATS disconnected, a request or
 * a JetStream publish timed out or found no responders (a restarting server, a cluster electing a
 * leader), a revision conflict. A handler's own errors decide for themselves (ChorusError.retryable);
 * anything else (a bug) is not retried.
 */
export function isTransient(error: unknown): boolean {
  if (error instanceof ChorusError) return error.retryable;
  if (
    error instanceof TimeoutError ||
    error instanceof RequestError ||
    error instanceof NoRespondersError ||
    error instanceof ConnectionError ||
    error instanceof ClosedConnectionError ||
    error instanceof DrainingConnectionError ||
    error instanceof JetStreamError
  ) {
    return true;
  }
  if (error instanceof JetStreamApiError) {
    // 503 (no JetStream leader right now), 408/504 timeouts, 429 too many requests.
    return [408, 429, 503, 504].includes(error.status) || isRevisionConflict(error);
  }
  return isRevisionConflict(error) || /timeout|timed out|no responders|disconnect|connection (closed|lost)|jetstream (not|is not) (enabled|available)/i.test(String((error as Error)?.message ?? ''));
}
