import {
  isTerminalStatus,
  type Envelope,
  type ErrorDetailsShape,
  type MessageType,
  type OrchestrationCommandPayload,
  type QueryPayload,
  type ResponsePayload,
  type StatusUpdatePayload,
  type ToolResultsPayload,
  type WorkflowStatus,
} from '@chorus/envelope';
import type { WorkflowRecord } from './workflow.record';
import { MAX_COMMAND_STEPS, isRetryCommand, isRetryOf, queryStep, retry, retryAskedBeforeEnd } from './workflow.retry';
import { HUB_AGENT, addStep, ownValue, withEntry, type Transition } from './workflow.steps';


/**
 * Keys a finished workflow's record holds before later envelopes are only counted (late, or
 * duplicate queries): each adds its key and message id to the record, about 150 bytes, and a client
 * publishing to a finished workflow for long enough would grow it past what the ledger stores
 * (a message, 1 MB), after which every write of it failed. A whole workflow records about a dozen.
 */
export const MAX_FINISHED_KEYS = 200;

/** Where the envelope was stored, which tells a redelivery from a re-publish. */
export interface Delivery {
  idempotencyKey: string;
  streamSeq: number;
}

/**
 * When the workflow started: its query's timestamp, but never later than the hub's own clock when
 * it records it (a publisher's clock ahead of the hub's, or a forged timestamp, must not push the
 * start, and with it the longest deadline the hub holds the workflow to, into the future).
 */
function startedAt(envelope: Envelope, now: Date): string {
  const t = Date.parse(envelope.timestamp);
  return Number.isFinite(t) && t <= now.getTime() ? envelope.timestamp : now.toISOString();
}

/** A new, empty record for a workflow first seen through `envelope`. */
export function createRecord(envelope: Envelope, now: Date): WorkflowRecord {
  return {
    correlation_id: envelope.correlation_id,
    tenant_id: envelope.tenant_id,
    query: null,
    session_id: null,
    retry_of: null,
    retried_as: null,
    status: 'pending',
    degraded: false,
    degradations: [],
    started_at: envelope.message_type === 'query' ? startedAt(envelope, now) : now.toISOString(),
    updated_at: now.toISOString(),
    finished_at: null,
    deadline: envelope.deadline,
    agents_involved: [],
    steps: [],
    next_steps: [],
    errors: [],
    duplicates_dropped: 0,
    late_envelopes: 0,
    result: null,
    seen: {},
    times: {},
  };
}

/**
 * Applies one envelope to a workflow: `(state, envelope) → { state, emits }`. Pure: the record is
 * copied, never mutated. Each idempotency key is recorded once; a terminal status never changes.
 */
export function applyEnvelope(
  current: WorkflowRecord | null,
  envelope: Envelope,
  delivery: Delivery,
  now: Date,
  context: { retrySource?: Envelope | null } = {},
): Transition {
  const base = current ?? createRecord(envelope, now);
  const known = ownValue(base.seen, delivery.idempotencyKey);
  if (known === delivery.streamSeq) return { record: base, effect: 'redelivered', emits: [] };
  // The same key stored again, or the very same envelope (same message_id) stored again under
  // another key (a raw re-publish without its Nats-Msg-Id, whose part we cannot know).
  if (known !== undefined || ownValue(base.times, envelope.message_id) !== undefined) {
    return { record: { ...base, duplicates_dropped: base.duplicates_dropped + 1, updated_at: now.toISOString() }, effect: 'duplicate', emits: [] };
  }
  // Commands published straight to the bus are not bounded as the HTTP API bounds them (asked again,
  // a retried workflow answers with its retry): past this many, a retry command changes nothing, not
  // even the keys seen, so a client looping on retries cannot grow the record past what a message
  // holds. Its redelivery is ignored alike.
  if (isRetryCommand(envelope) && base.steps.filter((s) => s.message_type === 'orchestration_command').length >= MAX_COMMAND_STEPS) {
    return { record: base, effect: 'recorded', emits: [] };
  }
  // Past its keys' limit, a finished workflow counts what comes late without recording its key (a
  // redelivery of one of these counts again: only a flood gets here).
  // Retry commands are left to their own limit (above), so a flooded workflow can still be retried.
  if (isTerminalStatus(base.status) && !isRetryCommand(envelope) && Object.keys(base.seen).length >= MAX_FINISHED_KEYS) {
    const counted = envelope.message_type === 'query' ? { duplicates_dropped: base.duplicates_dropped + 1 } : { late_envelopes: base.late_envelopes + 1 };
    const own = envelope.agent === HUB_AGENT && envelope.message_type === 'status_update';
    return own ? { record: base, effect: 'recorded', emits: [] } : { record: { ...base, ...counted, updated_at: now.toISOString() }, effect: envelope.message_type === 'query' ? 'duplicate' : 'late', emits: [] };
  }
  const record: WorkflowRecord = {
    ...base,
    seen: withEntry(base.seen, delivery.idempotencyKey, delivery.streamSeq),
    times: withEntry(base.times, envelope.message_id, envelope.timestamp),
    updated_at: now.toISOString(),
  };
  const isOwnUpdate = envelope.agent === HUB_AGENT && envelope.message_type === 'status_update';
  if (isOwnUpdate) return { record, effect: 'recorded', emits: [] };
  if (isRetryCommand(envelope)) {
    if (isTerminalStatus(base.status) && storedBeforeEnd(base, delivery.streamSeq)) return retryAskedBeforeEnd(record, envelope, delivery.idempotencyKey, delivery.streamSeq);
    return retry(record, envelope, delivery.idempotencyKey, context.retrySource ?? null, now);
  }
  // A workflow runs one query. Another one under another key is the same submission from a second
  // client at the same moment (a keyed or session-named query from the CLI and the HTTP ingress:
  // one workflow id, each under its own agent's key, both checked before either was stored). Its
  // key is kept, so its redelivery is one, and it is counted as the duplicate it is.
  if (envelope.message_type === 'query' && queryStep(base) !== undefined) {
    return { record: { ...record, duplicates_dropped: record.duplicates_dropped + 1 }, effect: 'duplicate', emits: [] };
  }
  if (isTerminalStatus(record.status)) {
    if (storedBeforeEnd(base, delivery.streamSeq)) return { record: backfill(record, envelope, delivery), effect: 'applied', emits: [] };
    return { record: { ...record, late_envelopes: record.late_envelopes + 1 }, effect: 'late', emits: [] };
  }

  addStep(record, envelope, delivery.idempotencyKey, delivery.streamSeq);
  if (envelope.status === 'error') return fail(record, envelope, now);

  switch (envelope.message_type) {
    case 'query': {
      takeQuery(record, envelope);
      record.started_at = startedAt(envelope, now);
      record.deadline = envelope.deadline;
      break;
    }
    case 'tool_results':
      takeDegradations(record, envelope, delivery.idempotencyKey);
      break;
    case 'response':
      record.result = envelope.payload as ResponsePayload;
      return finish(record, 'completed', endedAt(record, envelope.timestamp, now), { reason: 'response published', step: 'response' });
    case 'orchestration_command':
      return command(record, envelope, now);
    default:
      break;
  }
  if (envelope.message_type !== 'query' && record.status === 'pending') record.status = 'running';
  return { record, effect: 'applied', emits: [] };
}

/**
 * Whether the stream stored this envelope before the one that ended the workflow (its response, its
 * first failure report, its cancel; a timeout has none). The hub applies a workflow's envelopes in
 * stream order, but one handed back by a hub that stalled or lost its lease comes again after later
 * ones that the active hub applied meanwhile: it is a step of the workflow, not a late envelope.
 */
function storedBeforeEnd(record: WorkflowRecord, streamSeq: number): boolean {
  const ending =
    record.status === 'completed'
      ? record.steps.find((s) => s.message_type === 'response' && s.status !== 'error')
      : record.status === 'failed'
        ? record.steps.find((s) => s.status === 'error')
        : record.status === 'cancelled'
          ? record.steps.find((s) => s.message_type === 'orchestration_command' && s.status !== 'error' && !record.errors.some((e) => e.message_id === s.message_id))
          : undefined;
  const endSeq = ending ? ownValue(record.seen, ending.step) : undefined;
  return endSeq !== undefined && streamSeq < endSeq;
}

/**
 * An envelope applied after the end it was stored before: its step goes where the stream holds it,
 * and what it tells the record (the query, the degradations, an error) is kept; the status, already
 * announced, stays.
 */
function backfill(record: WorkflowRecord, envelope: Envelope, delivery: Delivery): WorkflowRecord {
  addStep(record, envelope, delivery.idempotencyKey, delivery.streamSeq);
  if (envelope.status === 'error') recordError(record, envelope);
  else if (envelope.message_type === 'query') {
    takeQuery(record, envelope);
    const t = Date.parse(envelope.timestamp);
    if (Number.isFinite(t) && t < Date.parse(record.started_at)) record.started_at = envelope.timestamp;
  } else if (envelope.message_type === 'tool_results') takeDegradations(record, envelope, delivery.idempotencyKey);
  return record;
}

/**
 * Whether an envelope of this type starts a record for a workflow the ledger does not know: a query,
 * or an agent's step (a client may start a choreography past its first steps). A status update or
 * a command of an unknown workflow is a stray, left out of the ledger (apps/hub, StrayEnvelopes).
 */
export function startsRecord(messageType: MessageType): boolean {
  return messageType !== 'status_update' && messageType !== 'orchestration_command';
}

/** Marks a workflow whose deadline has passed `timed_out`; anything else is returned unchanged. */
export function applyDeadline(record: WorkflowRecord, now: Date): Transition {
  if (isTerminalStatus(record.status) || Date.parse(record.deadline) > now.getTime()) {
    return { record, effect: 'recorded', emits: [] };
  }
  const waitingFor = record.next_steps[0];
  const reason = `deadline ${record.deadline} passed${waitingFor ? ` (waiting for ${waitingFor})` : ''}`;
  // The record says why, as a failure's does: the agent whose step was still to come, and when.
  const timeout = { error_type: 'DEADLINE_EXCEEDED', error_message: reason, retry_possible: false, agent: waitingFor ?? 'hub', step: null, at: record.deadline };
  // It ended at its deadline, even when the hub (down, or behind) marks it later.
  return finish({ ...record, updated_at: now.toISOString(), errors: [...record.errors, timeout] }, 'timed_out', endedAt(record, record.deadline, now), {
    reason,
    step: null,
  });
}

/**
 * Records the hub's own announcement as seen, as {@link applyEnvelope} would on its delivery: saved
 * with the change that caused it, so its delivery back to the hub is a redelivery with nothing to
 * write.
 */
export function recordAnnouncement(record: WorkflowRecord, envelope: Pick<Envelope, 'message_id' | 'timestamp'>, delivery: Delivery): WorkflowRecord {
  return {
    ...record,
    seen: withEntry(record.seen, delivery.idempotencyKey, delivery.streamSeq),
    times: withEntry(record.times, envelope.message_id, envelope.timestamp),
  };
}

/** Records a duplicate the stream dropped (reported by its publisher). */
export function applyDroppedDuplicate(record: WorkflowRecord, now: Date): WorkflowRecord {
  return { ...record, duplicates_dropped: record.duplicates_dropped + 1, updated_at: now.toISOString() };
}

function fail(record: WorkflowRecord, envelope: Envelope, now: Date): Transition {
  const { details, step } = recordError(record, envelope);
  return finish(record, 'failed', endedAt(record, envelope.timestamp, now), {
    reason: `${envelope.agent} failed${step ? ` handling ${step}` : ''}: ${details.error_message}`,
    step,
    error: details,
  });
}

/**
 * What degraded results tell the record: the lenses they lost. Only the workflow's latest results (in
 * stream order, `key` its step) say it: older ones, applied after, say nothing.
 */
function takeDegradations(record: WorkflowRecord, envelope: Envelope, key: string): void {
  const { degraded } = envelope.payload as ToolResultsPayload;
  if (degraded.length === 0 || record.steps.filter((s) => s.message_type === 'tool_results').at(-1)?.step !== key) return;
  record.degraded = true;
  record.degradations = [...degraded];
}

/** What the workflow's query tells its record: the question, the session, what it retries. */
function takeQuery(record: WorkflowRecord, envelope: Envelope): void {
  const payload = envelope.payload as QueryPayload;
  record.query = payload.query;
  record.session_id = payload.session_id ?? null;
  record.retry_of = isRetryOf(envelope, payload.retry_of) ? payload.retry_of : null;
}

/** Adds the failure an envelope reports to the record's errors. */
function recordError(record: WorkflowRecord, envelope: Envelope): { details: ErrorDetailsShape; step: MessageType | null } {
  const details: ErrorDetailsShape = envelope.error_details ?? {
    error_type: 'UNKNOWN',
    error_message: 'an agent reported an error without details',
    retry_possible: false,
  };
  const step = envelope.message_type === 'status_update' ? ((envelope.payload as StatusUpdatePayload).step ?? null) : envelope.message_type;
  record.errors = [...record.errors, { ...details, agent: envelope.agent, step, at: envelope.timestamp, message_id: envelope.message_id }];
  return { details, step };
}

function command(record: WorkflowRecord, envelope: Envelope, now: Date): Transition {
  const payload = envelope.payload as OrchestrationCommandPayload;
  if (payload.command === 'cancel') {
    return finish(record, 'cancelled', endedAt(record, envelope.timestamp, now), { reason: payload.reason || `cancelled by ${envelope.agent}`, step: null });
  }
  // A retry never gets here (see isRetryCommand); the payload's schema allows no other command.
  throw new Error(`unexpected orchestration command '${String(payload.command)}'`);
}

/**
 * When a workflow ended: the time of what ended it (its response, failure report, cancel, or its
 * deadline), not when the hub got to it (a hub that was down or behind applies it later), kept
 * between the workflow's start and now so a sender's clock cannot put it out of order.
 */
function endedAt(record: WorkflowRecord, at: string, now: Date): Date {
  const t = Date.parse(at);
  const start = Date.parse(record.started_at);
  if (!Number.isFinite(t)) return now;
  return new Date(Math.min(now.getTime(), Math.max(Number.isFinite(start) ? start : t, t)));
}

function finish(
  record: WorkflowRecord,
  status: WorkflowStatus,
  now: Date,
  change: { reason: string; step: MessageType | null; error?: ErrorDetailsShape },
): Transition {
  const previous = record.status;
  const done: WorkflowRecord = { ...record, status, finished_at: now.toISOString(), next_steps: [] };
  return {
    record: done,
    effect: 'applied',
    emits: [{ status, previous, reason: change.reason, step: change.step, error: change.error ?? null }],
  };
}
