/**
 * Errors of the envelope contract. Every Chorus error extends {@link ChorusError}: a readonly
 * SCREAMING_SNAKE `code`, whether a retry may succeed, and the original `cause`.
 */
export abstract class ChorusError extends Error {
  abstract readonly code: string;
  /** True when the same step, run again with the same input, may succeed. */
  readonly retryable: boolean;
  /**
   * True for a condition already reported where it arose (a hub replica handing its envelopes to
   * the active one, which it logs once per batch): the consumer logs the retry at debug, not warn.
   */
  readonly reported: boolean = false;

  protected constructor(message: string, options: { retryable?: boolean; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.retryable = options.retryable ?? false;
  }
}

/** One invalid field of an envelope, a payload or a request body. */
export interface FieldError {
  /** Dotted path of the field (`payload.query`), or `$` for the whole document. */
  readonly field: string;
  /** Every rule the value broke, in plain words. */
  readonly messages: readonly string[];
}

export const EnvelopeErrorCodes = Object.freeze({
  InvalidEnvelope: 'INVALID_ENVELOPE',
  StepFailed: 'STEP_FAILED',
  /** A request to a service on the bus (the hub's queries, a profile's endpoints) it refuses. */
  BadRequest: 'BAD_REQUEST',
} as const);

/** Raised by {@link parseEnvelope}: lists every invalid field, never just the first. */
export class InvalidEnvelopeError extends ChorusError {
  readonly code = EnvelopeErrorCodes.InvalidEnvelope;
  constructor(readonly errors: readonly FieldError[]) {
    super(`invalid envelope: ${errors.map((e) => e.field).join(', ')}`);
  }
}

/**
 * A request a service answering on the bus refuses (the hub's queries, a profile's endpoints):
 * every invalid field, which its error reply carries as well as its text, so the caller fixes them
 * all at once.
 */
export class BadRequestError extends ChorusError {
  readonly code = EnvelopeErrorCodes.BadRequest;
  constructor(readonly fields: readonly FieldError[]) {
    super(fields.flatMap((f) => f.messages).join('; '));
  }
}

/** One invalid field, one message. */
export function badField(field: string, message: string): FieldError {
  return { field, messages: [message] };
}

/** A step that failed for a reason a handler chose to report; retryable or not as it says. */
export class StepFailedError extends ChorusError {
  readonly code: string;
  /** The request asked for what this deployment cannot do: the caller's mistake, not a fault (logged as a warning). */
  readonly requestError: boolean;
  constructor(code: string, message: string, options: { retryable?: boolean; cause?: unknown; requestError?: boolean } = {}) {
    super(message, options);
    this.code = code;
    this.requestError = options.requestError ?? false;
  }
}

/** How an error crosses the wire: the envelope's `error_details`. */
export interface ErrorDetailsShape {
  error_type: string;
  error_message: string;
  retry_possible: boolean;
}

/** Converts any thrown value to `error_details`, keeping a Chorus error's code and retryability. */
export function toErrorDetails(error: unknown): ErrorDetailsShape {
  if (error instanceof ChorusError) {
    return { error_type: error.code, error_message: error.message, retry_possible: error.retryable };
  }
  if (error instanceof Error) {
    return { error_type: 'INTERNAL', error_message: error.message || error.name, retry_possible: false };
  }
  return { error_type: 'INTERNAL', error_message: describeThrown(error), retry_possible: false };
}

/** Whatever was thrown, as text: `String()` itself throws for an object without a prototype. */
function describeThrown(value: unknown): string {
  try {
    return String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

/** The inverse of {@link toErrorDetails}: a wire error back into a throwable. */
export function fromErrorDetails(details: ErrorDetailsShape): StepFailedError {
  return new StepFailedError(details.error_type, details.error_message, { retryable: details.retry_possible });
}
