import { headers as natsHeaders, NoRespondersError as NatsNoResponders, TimeoutError as NatsTimeout, nuid, RequestError, type Msg, type Subscription } from '@nats-io/transport-node';
import { boundFieldErrors, ChorusError, EnvelopeErrorCodes, toErrorDetails, type FieldError } from '@chorus/envelope';
import type { Logger } from '@chorus/observability';
import type { Bus } from './nats.bus';
import { BusErrorCodes, NoRespondersError, RemoteError, RequestTimeoutError } from './bus.errors';
import { ChorusHeaders } from './headers';
import { natsOutageKind } from './transient-error';

/**
 * The reply of every Chorus request/reply endpoint. A refused request's error lists its invalid
 * fields when the handler named them (an error with a `fields` list).
 */
export type Reply<T> = { ok: true; data: T } | { ok: false; error: { code: string; message: string; retryable: boolean; fields?: FieldError[] } };

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export interface Responder {
  stop(): Promise<void>;
}

/**
 * Answers JSON requests on `subject` in queue group `queue` (replicas share the load). A thrown
 * error becomes an `{ok:false, error}` reply; malformed JSON gets a BAD_REQUEST reply; a reply
 * larger than the server's max_payload gets a REPLY_TOO_LARGE reply. Nothing a request or its
 * handler does can end in an unhandled rejection.
 */
export function serveRequests<T>(
  bus: Bus,
  subject: string,
  queue: string,
  log: Logger,
  handle: (request: unknown) => Promise<T>,
): Responder {
  // The latest try of each request (one `Chorus-Request-Id`) this replica is working out: the answer
  // goes to it, once, however many tries arrived meanwhile (working it out again, or sending a large
  // answer to every try, would only load a replica that is slow already). Any try of a hedged request
  // still listens; a plain client that gave a try up and asked again listens on its latest. A try that
  // comes after the answer is answered anew: its requester missed the earlier answer. A try is one of
  // the same request only if its body is the same bytes (two clients may pick the same id: each must
  // hear its own answer), and only for a while (a handler that never settles holds no id for good).
  const working = new Map<string, Working>();
  const sub: Subscription = bus.nc.subscribe(subject, {
    queue,
    callback: (err, msg) => {
      if (err) {
        log.error({ err, subject }, 'request subscription failed');
        return;
      }
      const id = msg.headers?.get(ChorusHeaders.RequestId) || undefined;
      const earlier = id === undefined ? undefined : working.get(id);
      if (earlier && Date.now() - earlier.since < TRY_MERGE_MS && sameBytes(earlier.data, msg.data)) {
        earlier.latest = msg;
        return;
      }
      const mine: Working | undefined = id === undefined || earlier ? undefined : { data: msg.data, since: Date.now(), latest: msg };
      if (id !== undefined && mine) working.set(id, mine);
      void answer(msg, handle, log, subject, bus.nc.info?.max_payload)
        .then((data) => {
          const to = mine?.latest ?? msg;
          if (to.reply) to.respond(data);
        })
        .catch((e) => log.error({ err: e, subject }, 'request could not be answered'))
        .finally(() => id !== undefined && working.get(id) === mine && working.delete(id));
    },
  });
  return {
    stop: async () => {
      await sub.drain();
    },
  };
}

/** A request a replica is working out: its body, since when, and the latest of its tries to reach it. */
interface Working {
  data: Uint8Array;
  since: number;
  latest: Msg;
}

/** How long tries of one request id are taken as one (a hub read's tries come within its 5 s timeout). */
const TRY_MERGE_MS = 30_000;

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.from(a.buffer, a.byteOffset, a.length).equals(Buffer.from(b.buffer, b.byteOffset, b.length));
}

/** Works out the answer to one request: its bytes, to send to the request's latest try. */
async function answer<T>(msg: Msg, handle: (request: unknown) => Promise<T>, log: Logger, subject: string, maxPayload: number | undefined): Promise<Uint8Array> {
  let reply: Reply<T>;
  try {
    const body = msg.data.length === 0 ? {} : JSON.parse(decoder.decode(msg.data));
    reply = { ok: true, data: await handle(body) };
  } catch (e) {
    // NATS away or slow while the handler worked (a timeout, a leader election): the requester may
    // try again, and hears so (UNAVAILABLE, retryable), not an internal error.
    const outage = e instanceof ChorusError ? null : natsOutageKind(e);
    const d = e instanceof SyntaxError
      ? { error_type: EnvelopeErrorCodes.BadRequest, error_message: `request is not valid JSON: ${e.message}`, retry_possible: false }
      : outage
        ? { error_type: BusErrorCodes.Unavailable, error_message: `${outage === 'timeout' ? 'NATS did not answer in time' : 'NATS is unavailable'}: ${(e as Error).message}`, retry_possible: true }
        : toErrorDetails(e);
    const unavailable = outage !== null;
    if (unavailable) log.warn({ err: e, subject }, 'request handler failed: NATS unavailable');
    else if (!(e instanceof ChorusError) && !(e instanceof SyntaxError)) log.error({ err: e, subject }, 'request handler failed');
    const fields = fieldErrorsOf(e);
    reply = { ok: false, error: { code: d.error_type, message: d.error_message, retryable: d.retry_possible, ...(fields ? { fields: boundFieldErrors(fields) } : {}) } };
  }
  let data: Uint8Array;
  try {
    data = encoder.encode(JSON.stringify(reply));
  } catch (e) {
    // A result JSON cannot carry (a cycle, a BigInt): the requester still hears why, now.
    log.error({ err: e, subject }, 'reply could not be encoded');
    data = encoder.encode(JSON.stringify(failure('INTERNAL', 'the reply could not be encoded as JSON')));
  }
  if (maxPayload !== undefined && data.length > maxPayload) {
    log.warn({ subject, reply_bytes: data.length, max_payload: maxPayload }, 'reply too large for one message');
    data = encoder.encode(JSON.stringify(failure(BusErrorCodes.ReplyTooLarge, `the reply (${data.length} bytes) is larger than the server's max_payload (${maxPayload} bytes)`)));
  }
  return data;
}

/** The `fields` of a thrown Chorus error or of a wire error, when it is a list of field errors. */
export function fieldErrorsOf(e: unknown): FieldError[] | undefined {
  if (typeof e !== 'object' || e === null || !('fields' in e) || !Array.isArray(e.fields)) return undefined;
  if (e instanceof Error && !(e instanceof ChorusError)) return undefined;
  const valid = e.fields.every(
    (f: unknown) =>
      typeof f === 'object' && f !== null && typeof (f as FieldError).field === 'string' && Array.isArray((f as FieldError).messages) && (f as FieldError).messages.every((m) => typeof m === 'string'),
  );
  return valid ? (e.fields as FieldError[]) : undefined;
}

function failure(code: string, message: string): Reply<never> {
  return { ok: false, error: { code, message, retryable: false } };
}

export interface RequestOptions {
  /**
   * For a read that any replica of a queue group may answer, and that may be answered twice: ask
   * again (NATS picks a replica at random each time) every this many milliseconds while no answer
   * came, up to `maxTries` tries, within the timeout; the first answer wins. A replica that is
   * stopped or stalled, but still connected, keeps its share of a queue group's requests until the
   * server gives up on it, minutes later: without this, that share of the reads waited out the whole
   * timeout and failed. With one of two replicas silent, a read sent n times fails only if every try
   * went to it (1 in 2^n). The tries bound the copies a read slow for another reason costs.
   */
  hedgeAfterMs?: number;
  /** The most tries of a hedged request, the first included. */
  maxTries?: number;
}

/**
 * The hub's reads (a workflow, its history, a list, the stats): a hub answers most in a millisecond
 * or two, so no answer in a quarter of a second most likely means a replica that is not answering.
 * Sixteen tries (within 3.75 s): with one of two replicas stopped, one read in 65,536 fails. A read
 * slow for another reason costs at most that many copies; history reads, the heavy ones, are bounded
 * on the hub, which refuses the excess as busy (a refusal wins only when no other try is left).
 */
export const HUB_READ: RequestOptions = Object.freeze({ hedgeAfterMs: 250, maxTries: 16 });

/** Sends a JSON request and returns the reply's data, or throws a typed error. */
export async function requestReply<T>(bus: Bus, subject: string, body: unknown, timeoutMs: number, options: RequestOptions = {}): Promise<T> {
  let raw: Uint8Array;
  try {
    const data = encoder.encode(JSON.stringify(body));
    const msg =
      options.hedgeAfterMs === undefined
        ? await bus.nc.request(subject, data, { timeout: timeoutMs })
        : await requestHedged(bus, subject, data, timeoutMs, options.hedgeAfterMs, options.maxTries ?? Number.POSITIVE_INFINITY);
    raw = msg.data;
  } catch (e) {
    throw toRequestError(e, subject, timeoutMs);
  }
  const reply = JSON.parse(decoder.decode(raw)) as Reply<T>;
  if (!reply.ok) throw new RemoteError(subject, reply.error.code, reply.error.message, reply.error.retryable, fieldErrorsOf(reply.error));
  return reply.data;
}

/** True for a reply that says "try again" (a busy or briefly unavailable replica): another try may do better. */
function isRetryableRefusal(msg: Msg): boolean {
  try {
    const reply = JSON.parse(decoder.decode(msg.data)) as Partial<Reply<unknown>>;
    return reply.ok === false && reply.error?.retryable === true;
  } catch {
    return false;
  }
}

/**
 * The first answer to `data` on `subject`, the request sent again (see {@link RequestOptions})
 * while none came, every try bounded by the same deadline. A reply that says "try again" wins only
 * when no other try is left to answer; a try that fails for any reason but its timeout ("no
 * responders", a closed connection, a permission) ends it at once, since another copy would fail
 * alike.
 */
export function requestHedged(
  bus: Bus,
  subject: string,
  data: Uint8Array,
  timeoutMs: number,
  intervalMs: number,
  maxTries: number,
  /** Whether a reply says "try again" (by default, a Chorus reply refusing with a retryable error). */
  isRefusal: (msg: Msg) => boolean = isRetryableRefusal,
): Promise<Msg> {
  const deadline = Date.now() + timeoutMs;
  // Every try carries the same id: a replica that gets several answers one (see serveRequests).
  const headers = natsHeaders();
  headers.set(ChorusHeaders.RequestId, nuid.next());
  return new Promise<Msg>((resolve, reject) => {
    let settled = false;
    let outstanding = 0;
    let timer: NodeJS.Timeout | undefined;
    const interval = Math.max(1, intervalMs);
    let tries = 0;
    let refusal: Msg | undefined;
    let lastError: unknown;
    const settle = (done: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      done();
    };
    // Nothing left to come: the best there is.
    const giveUp = () => settle(() => (refusal ? resolve(refusal) : reject(lastError ?? new RequestTimeoutError(subject, timeoutMs))));
    const send = () => {
      timer = undefined;
      const remaining = deadline - Date.now();
      if (remaining <= 0) {
        // The timer fired late, past the deadline: nothing more is sent.
        if (outstanding === 0) giveUp();
        return;
      }
      outstanding += 1;
      tries += 1;
      bus.nc.request(subject, data, { timeout: remaining, headers }).then(
        (msg) => {
          outstanding -= 1;
          if (!isRefusal(msg)) return settle(() => resolve(msg));
          refusal = msg;
          if (outstanding === 0 && timer === undefined) giveUp();
        },
        (e: unknown) => {
          outstanding -= 1;
          lastError = e;
          if (!(toRequestError(e, subject, timeoutMs) instanceof RequestTimeoutError)) return settle(() => reject(e));
          if (outstanding === 0 && timer === undefined) giveUp();
        },
      );
      if (tries < maxTries && Date.now() + interval < deadline) timer = setTimeout(send, interval);
    };
    send();
  });
}

/** True when NATS answered a request with "no responders": nobody subscribes to its subject. */
export function isNoResponders(e: unknown): boolean {
  const cause = e instanceof RequestError && e.cause ? e.cause : e;
  return cause instanceof NatsNoResponders || (e instanceof RequestError && e.isNoResponders());
}

/** Maps the client's request errors onto Chorus errors (both are retryable). */

export function toRequestError(e: unknown, subject: string, timeoutMs: number): Error {
  if (isNoResponders(e)) return new NoRespondersError(subject);
  const cause = e instanceof RequestError && e.cause ? e.cause : e;
  if (cause instanceof NatsTimeout) return new RequestTimeoutError(subject, timeoutMs);
  return e as Error;
}
