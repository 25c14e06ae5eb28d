import { setMaxListeners } from 'node:events';
import type { Server } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { errorBody } from './http.errors';

/**
 * How long a closing ingress lets the requests in flight finish and their clients read the answers
 * before it cuts the connections left: a client that does not read its answer (or a slow route)
 * cannot hold the process. Every route but the long-lived ones answers well within it.
 */
export const CLOSE_GRACE_MS = 10_000;

/** How often a closing ingress closes the keep-alive connections whose last answer was sent. */
const IDLE_SWEEP_MS = 100;

/**
 * The last thing an event stream sends when its ingress shuts down: an SSE comment, which an
 * EventSource (and the dashboard) reads past, so no client meets an event it does not know. The
 * stream then ends without its `terminal` event: a client reconnects, with `Last-Event-ID`, to
 * another replica, and the stream resumes after the last step it received.
 */
export const SSE_SHUTDOWN_COMMENT = ': shutting down: reconnect with Last-Event-ID to resume\n\n';

/** Long-lived requests (event streams, waits) open at once past which Node warns of a possible leak. */
const MAX_OPEN_LONG_REQUESTS = 100_000;

/**
 * What aborts when the ingress starts closing. Every open event stream and wait listens on it, each
 * until its request ends, so it takes as many listeners as requests can be open (past Node's default
 * of 10, it printed a MaxListenersExceededWarning, a raw line among the JSON logs); a count past this
 * one is worth the warning.
 */
export function closingController(): AbortController {
  const closing = new AbortController();
  setMaxListeners(MAX_OPEN_LONG_REQUESTS, closing.signal);
  return closing;
}


/**
 * A signal aborted when `source` emits `close` (its response sent, or its client gone) or when the
 * ingress starts closing: what a long-lived response stops on. The listener on `closing`, which
 * lives as long as the process, is removed with the request.
 */
export function endsWithRequest(source: NodeJS.EventEmitter, closing: AbortSignal): AbortSignal {
  const ended = new AbortController();
  const end = () => ended.abort();
  source.once('close', () => {
    closing.removeEventListener('abort', end);
    end();
  });
  if (closing.aborted) end();
  else closing.addEventListener('abort', end, { once: true });
  return ended.signal;
}

export const SHUTTING_DOWN = 'this ingress is shutting down; nothing was done, try again (another replica answers)';

/**
 * A request that reaches a closing ingress (on a keep-alive connection opened before: the listening
 * socket is closed) is refused as the other 503s are, nothing done, and its connection closed, so
 * the client's retry goes to a replica that runs. `/a2a` answers it in its own shape (a2a.mount.ts).
 */
export function refuseWhileClosing(closing: AbortSignal, body: (req: Request) => unknown = () => errorBody(503, SHUTTING_DOWN)) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!closing.aborted) return next();
    res.setHeader('Connection', 'close');
    res.setHeader('Retry-After', '1');
    res.status(503).json(body(req));
  };
}

/**
 * Closes the HTTP server without waiting for long-lived responses: stops accepting connections,
 * then aborts `closing`, which ends every event stream and A2A stream and answers every `?wait=true`
 * at once (each with what its client needs to go on elsewhere). Other requests in flight finish;
 * each connection is closed once its answer is sent, and those left after `graceMs` are cut.
 * Node's `server.close()` alone waited for every connection: SIGTERM took until the last workflow
 * being followed ended (minutes).
 */
export async function closeHttpServer(server: Server, closing: AbortController, graceMs = CLOSE_GRACE_MS): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  closing.abort();
  // A keep-alive connection stays open after its answer (for its next request) until it times out.
  const sweep = setInterval(() => server.closeIdleConnections(), IDLE_SWEEP_MS);
  const cut = setTimeout(() => server.closeAllConnections(), graceMs);
  try {
    await closed;
  } finally {
    clearInterval(sweep);
    clearTimeout(cut);
  }
}
