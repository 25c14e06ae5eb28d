import { ChorusError, type FieldError, type WorkflowStatus } from '@chorus/envelope';

export const BusErrorCodes = Object.freeze({
  NoJetStream: 'NO_JETSTREAM',
  Unreachable: 'NATS_UNREACHABLE',
  RequestFailed: 'REQUEST_FAILED',
  NoResponders: 'NO_RESPONDERS',
  Timeout: 'TIMEOUT',
  RemoteError: 'REMOTE_ERROR',
  /** A request/reply answer larger than the server's max_payload (the responder says so instead). */
  ReplyTooLarge: 'REPLY_TOO_LARGE',
  NotRecordedYet: 'NOT_RECORDED_YET',
  /** A responder's own NATS calls failed for a reason NATS recovers from: try again. */
  Unavailable: 'UNAVAILABLE',
  /** JetStream refused to store a publish: its storage is full (the server's max_file_store, or an account limit). */
  StorageFull: 'STORAGE_FULL',
  /** An envelope larger than one NATS message (the server's max_payload). */
  EnvelopeTooLarge: 'ENVELOPE_TOO_LARGE',
  /** An idempotency key whose workflow ended and has left the hub's ledger: it cannot start it again. */
  IdempotencyKeyExpired: 'IDEMPOTENCY_KEY_EXPIRED',
} as const);

/**
 * JetStream answered a publish "insufficient resources": nothing more can be stored until space is
 * freed or the limits are raised. Retryable (space may free); a client's submission hears it at once,
 * an agent's publish after retrying as in an outage (Bus.publish, `failWhenFull`).
 */
export class StorageFullError extends ChorusError {
  readonly code = BusErrorCodes.StorageFull;
  constructor(readonly subject: string, cause?: unknown) {
    super(
      `JetStream storage is full (${String((cause as Error)?.message ?? cause)}): nothing was stored on ${subject}; free space or raise the server's max_file_store (or the account's limits)`,
      { cause, retryable: true },
    );
  }
}

/** An envelope that does not fit in one NATS message: its size and the server's limit. */
export class EnvelopeTooLargeError extends ChorusError {
  readonly code = BusErrorCodes.EnvelopeTooLarge;
  constructor(
    readonly subject: string,
    readonly bytes: number,
    readonly maxPayload: number | undefined,
  ) {
    super(`the envelope for ${subject} takes ${bytes} bytes and its headers more, beyond the NATS server's max_payload (${maxPayload ?? 'unknown'} bytes)`);
  }
}

/** The server answers but has JetStream disabled. */
export class NoJetStreamError extends ChorusError {
  readonly code = BusErrorCodes.NoJetStream;
  constructor(readonly servers: string[], cause?: unknown) {
    super(`JetStream is not enabled on ${servers.join(', ')}: start nats-server with -js`, { cause });
  }
}

/**
 * No server of the list accepted a connection. The message says what to do: with nothing answering,
 * start a server or point NATS_URL at one; a server that refused the credentials needs other ones.
 */
export class NatsUnreachableError extends ChorusError {
  readonly code = BusErrorCodes.Unreachable;
  /** The client's word for the failure: "connection refused", "timeout", "Authorization Violation"… */
  readonly reason: string;
  /** True when a server answered and refused the credentials (nothing to start, a setting to fix). */
  readonly refused: boolean;
  constructor(readonly servers: string[], cause?: unknown) {
    const reason = String((cause as Error)?.message ?? cause);
    const refused = isAuthorizationFailure(cause);
    const where = servers.join(', ');
    super(
      refused
        ? `NATS at ${where} refused the connection (${reason}): check its credentials (CHORUS_NATS_CREDENTIALS, NATS_USER and NATS_PASS, or NATS_TOKEN)`
        : `no NATS server answers at ${where} (${reason}): start nats-server with -js there, or set NATS_URL to where one runs`,
      { cause, retryable: true },
    );
    this.reason = reason;
    this.refused = refused;
  }
}

/** nats.js's errors for a server that refused who connected. */
function isAuthorizationFailure(e: unknown): boolean {
  const name = (e as Error)?.name;
  return name === 'AuthorizationError' || name === 'UserAuthenticationExpiredError';
}

/** Nobody serves the subject of a request. */
export class NoRespondersError extends ChorusError {
  readonly code = BusErrorCodes.NoResponders;
  constructor(readonly subject: string) {
    super(`no responders on ${subject}`, { retryable: true });
  }
}

/** A workflow was accepted (its query is in the stream) but the hub has not recorded it yet: retry shortly. */
export class NotRecordedYetError extends ChorusError {
  readonly code = BusErrorCodes.NotRecordedYet;
  constructor(readonly correlationId: string, message = `workflow ${correlationId} was accepted, but the hub has not recorded it yet; try again shortly`) {
    super(message, { retryable: true });
  }
}

const differ = (fields: readonly string[]) => `${fields.join(', ')} differ${fields.length === 1 ? 's' : ''}`;

/**
 * An idempotency key used again for another request: the workflow it names was started with a
 * different query (text, session, profiles, top_k or require_all). Nothing new starts.
 */
export class IdempotencyKeyReusedError extends ChorusError {
  readonly code = 'IDEMPOTENCY_KEY_REUSED';
  constructor(
    readonly correlationId: string,
    /** The payload fields that differ from the workflow's query. */
    readonly fields: readonly string[],
  ) {
    super(`this idempotency key already named workflow ${correlationId}, started with another request (${differ(fields)}); use a new key for a new request`);
  }

  /** What differs, as a phrase: "query, top_k differ". */
  get differing(): string {
    return differ(this.fields);
  }
}

/**
 * An idempotency key whose workflow ended and has left the hub's ledger (finished workflows are kept
 * CHORUS_HUB_RETENTION_MS) while the stream still holds its trail: publishing its query again would
 * open a record for a workflow the agents know has ended, which would never run. Nothing is published;
 * a new key starts a new workflow.
 */
export class IdempotencyKeyExpiredError extends ChorusError {
  readonly code = BusErrorCodes.IdempotencyKeyExpired;
  constructor(
    readonly correlationId: string,
    /** How it ended, as the hub announced it. */
    readonly status: WorkflowStatus,
    /** When the hub announced that end (the announcement's timestamp). */
    readonly endedAt: string,
  ) {
    super(
      `this idempotency key named workflow ${correlationId}, which ended (${status} at ${endedAt}) and has left the hub's ledger ` +
        '(finished workflows are kept CHORUS_HUB_RETENTION_MS): the key cannot start it again, and nothing was started; use a new key to start a new workflow',
    );
  }
}

/**
 * A retry that cannot start: the workflow has not ended, completed with every lens, or its query is
 * no longer in the stream (`code` NOT_RETRYABLE or RETRY_IMPOSSIBLE, as the hub records them).
 */
export class RetryRefusedError extends ChorusError {
  constructor(
    readonly code: 'NOT_RETRYABLE' | 'RETRY_IMPOSSIBLE',
    readonly correlationId: string,
    message: string,
  ) {
    super(message);
  }
}

/** A request got no reply in time. */
export class RequestTimeoutError extends ChorusError {
  readonly code = BusErrorCodes.Timeout;
  constructor(readonly subject: string, readonly timeoutMs: number) {
    super(`no reply on ${subject} within ${timeoutMs} ms`, { retryable: true });
  }
}

/** The responder answered with an error. */
export class RemoteError extends ChorusError {
  readonly code: string;
  /** The invalid fields of a refused request, when the responder listed them. */
  constructor(readonly subject: string, code: string, message: string, retryable: boolean, readonly fields?: readonly FieldError[]) {
    super(message, { retryable });
    this.code = code;
  }
}
