import type { FieldError, WorkflowStatus } from '@chorus/envelope';

/**
 * A failed command as `--json` prints it on stdout, beside its text on stderr: the names of the HTTP
 * API's error bodies (`message`, `error_type`, `errors`, `status`), under one `error` key, so that a
 * script tells it from an answer with one look (`jq -e '.error'`).
 */
export interface CliErrorBody {
  error: {
    /** What went wrong: WORKFLOW_NOT_FOUND, NOT_RETRYABLE, NATS_UNREACHABLE… (see {@link CliErrorTypes}). */
    error_type: string;
    /** The text printed on stderr, without its hint. */
    message: string;
    /** Every invalid option or field, by the flag that set it. */
    errors?: FieldError[];
    /** The workflow's status, when it is why (nothing to cancel, nothing to retry, a key's workflow that ended). */
    status?: WorkflowStatus;
  };
}

/**
 * The CLI's own error types. The others are the codes of the errors the libraries raise
 * (INVALID_ENVELOPE, IDEMPOTENCY_KEY_REUSED, IDEMPOTENCY_KEY_EXPIRED, BAD_REQUEST, NOT_RETRYABLE, NO_RESPONDERS, TIMEOUT,
 * INVALID_CONFIG, NATS_UNREACHABLE), or the hub's (WORKFLOW_NOT_FOUND, as HTTP's 404 has it).
 */
export const CliErrorTypes = Object.freeze({
  Usage: 'USAGE',
  NotFound: 'WORKFLOW_NOT_FOUND',
  AlreadyFinished: 'ALREADY_FINISHED',
  /** The hub has not confirmed how a workflow ended (it is not answering, or is behind). */
  EndNotConfirmed: 'END_NOT_CONFIRMED',
  CredentialsRefused: 'NATS_CREDENTIALS_REFUSED',
  Unreachable: 'NATS_UNREACHABLE',
  /** An error without a code of its own. */
  Failed: 'FAILED',
} as const);

export interface Failure {
  exitCode: number;
  error_type: string;
  message: string;
  /** The stderr text, when it says more than `message` (each invalid field on a line of its own). */
  text?: string;
  /** What to do about it: a line after the text on stderr, not in the JSON. */
  hint?: string;
  errors?: FieldError[];
  status?: WorkflowStatus;
}

/** Reports a failure: its text on stderr and, with `json`, its {@link CliErrorBody} on stdout. Returns its exit code. */
export function reportFailure(io: { stdout: (line: string) => void; stderr: (line: string) => void }, json: boolean, f: Failure): number {
  io.stderr(`chorus: ${f.text ?? f.message}${f.hint ? `\n${f.hint}` : ''}`);
  if (json) {
    const body: CliErrorBody = { error: { error_type: f.error_type, message: f.message, ...(f.errors ? { errors: f.errors } : {}), ...(f.status ? { status: f.status } : {}) } };
    // One line: `chorus watch --json` prints a JSON document per line, and an error is one of them.
    io.stdout(JSON.stringify(body));
  }
  return f.exitCode;
}
