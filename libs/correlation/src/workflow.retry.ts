import { correlationIdForRetry, retryBudgetMs, retryRefusal, type Envelope, type OrchestrationCommandPayload, type QueryPayload } from '@chorus/envelope';
import type { WorkflowRecord } from './workflow.record';
import { HUB_AGENT, addStep, ownValue, type Transition } from './workflow.steps';

/** Retry commands a workflow records as steps; later ones are only marked seen (see `retry`). */
export const MAX_COMMAND_STEPS = 20;


/**
 * An `orchestration_command` `{command: "retry"}` (with any status but `error`, which reports a
 * failure like any other envelope's).
 */
export function isRetryCommand(envelope: Envelope): boolean {
  return envelope.message_type === 'orchestration_command' && envelope.status !== 'error' && (envelope.payload as OrchestrationCommandPayload).command === 'retry';
}

/**
 * Whether a retry command would start a retry of this workflow now, so the hub must read the query
 * it runs again (the stream sequence of the workflow's own query: {@link queryStreamSeq}).
 */
export function retryWouldStart(record: WorkflowRecord | null): record is WorkflowRecord {
  return record !== null && retryRefusal(record) === null && !record.retried_as;
}

/** Where the stream holds the query this workflow ran (the one the hub recorded), or null. */
export function queryStreamSeq(record: WorkflowRecord): number | null {
  const step = queryStep(record);
  return step ? (ownValue(record.seen, step.step) ?? null) : null;
}

export function queryStep(record: WorkflowRecord): WorkflowRecord['steps'][number] | undefined {
  return record.steps.find((s) => s.message_type === 'query');
}

/** A query's `retry_of` counts only from the hub, under the retry id of the workflow it names. */
export function isRetryOf(envelope: Envelope, retryOf: string | null | undefined): retryOf is string {
  return !!retryOf && envelope.agent === HUB_AGENT && correlationIdForRetry(envelope.tenant_id, retryOf) === envelope.correlation_id;
}

/**
 * An `orchestration_command` `{command: "retry"}`. A workflow that ended without a complete answer
 * (failed, timed out, cancelled, or completed degraded) is retried once: the hub starts a new
 * workflow, `correlationIdForRetry` of this one, with the same request (`source`: the query this
 * workflow ran, read from the stream) and time budget from now, and records it here as
 * `retried_as`; the retried workflow keeps its own terminal status. Asked again, the same retry
 * stands (nothing new starts). Otherwise the command is refused: recorded as an error
 * (`NOT_RETRYABLE`, or `RETRY_IMPOSSIBLE` when the stream no longer holds the workflow's query), and
 * nothing else changes. Either way it is a step of the audit trail.
 */
export function retry(record: WorkflowRecord, envelope: Envelope, key: string, source: Envelope | null, now: Date): Transition {
  // A step of the audit trail that leaves what the workflow waits for as it was.
  const nextSteps = record.next_steps;
  addStep(record, envelope, key);
  record.next_steps = nextSteps;
  if (!record.steps.some((s) => s.message_type === 'query')) {
    return refuseRetry(record, envelope, 'NOT_RETRYABLE', `the hub has no query recorded for workflow ${record.correlation_id} (unknown, or not started): there is nothing to retry`);
  }
  const refusal = retryRefusal(record);
  if (refusal) return refuseRetry(record, envelope, 'NOT_RETRYABLE', refusal);
  if (record.retried_as) return { record, effect: 'applied', emits: [] };
  if (source?.message_type !== 'query' || source.correlation_id !== record.correlation_id || source.tenant_id !== record.tenant_id) {
    return refuseRetry(record, envelope, 'RETRY_IMPOSSIBLE', `the query of workflow ${record.correlation_id} is no longer in the stream, so it cannot be run again`);
  }
  record.retried_as = correlationIdForRetry(record.tenant_id, record.correlation_id);
  return {
    record,
    effect: 'applied',
    emits: [],
    retry: {
      correlation_id: record.retried_as,
      tenant_id: record.tenant_id,
      payload: { ...(source.payload as QueryPayload), retry_of: record.correlation_id },
      deadline: new Date(now.getTime() + retryBudgetMs(record)).toISOString(),
      command: envelope,
    },
  };
}

/**
 * A retry command the stream stored before the envelope that ended its workflow, applied after that
 * end (handed back by a hub that stalled around a takeover): judged as the workflow was when it was
 * asked, still running, so refused, as the hub would have refused it in its turn; its step goes
 * where the stream holds it. Judged by the end instead, it could start a retry nobody could have got.
 */
export function retryAskedBeforeEnd(record: WorkflowRecord, envelope: Envelope, key: string, streamSeq: number): Transition {
  addStep(record, envelope, key, streamSeq);
  const refusal = retryRefusal({ ...record, status: 'running' }) ?? 'the workflow had not ended';
  return refuseRetry(record, envelope, 'NOT_RETRYABLE', `${refusal}; asked before it ended`);
}

/**
 * The retry a transition started, undone because its query could not be published for good (it
 * no longer fits in a message, say): the command stays a step, refused with `RETRY_IMPOSSIBLE`.
 */
export function retryNotStarted(t: Transition, reason: string): Transition {
  const command = t.retry?.command;
  if (!command) return t;
  return refuseRetry({ ...t.record, retried_as: null }, command, 'RETRY_IMPOSSIBLE', `the retry could not be started: ${reason}`);
}

function refuseRetry(record: WorkflowRecord, command: Envelope, error_type: string, error_message: string): Transition {
  const error = { error_type, error_message, retry_possible: false, agent: command.agent, step: 'orchestration_command', at: command.timestamp, message_id: command.message_id };
  return { record: { ...record, errors: [...record.errors, error] }, effect: 'applied', emits: [] };
}
