import type { Envelope, ErrorDetailsShape, MessageType, QueryPayload, WorkflowStatus } from '@chorus/envelope';
import type { WorkflowRecord } from './workflow.record';

/** The hub's own agent name: its status updates are recorded but never applied. */
export const HUB_AGENT = 'hub';

/**
 * A value of `seen` or `times`, whose keys come off the wire (a Nats-Msg-Id can be `constructor` or
 * `__proto__`): own keys only, never what a plain object inherits.
 */
export function ownValue<T>(map: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(map, key) ? map[key] : undefined;
}

/**
 * A copy of `map` with `key` set as an own property, even `__proto__`: spread and a computed key
 * define properties (only the literal `__proto__: v` form sets the prototype), so the JSON the
 * ledger stores keeps it.
 */
export function withEntry<T>(map: Readonly<Record<string, T>>, key: string, value: T): Record<string, T> {
  return { ...map, [key]: value };
}

/**
 * Adds the envelope's step: after the steps the stream stored before it (`streamSeq`; without it, at
 * the end). One stored before steps already applied (handed back by a hub that stalled around a
 * takeover, and applied after later ones) goes in its place, and leaves what the workflow waits for.
 */
export function addStep(record: WorkflowRecord, envelope: Envelope, key: string, streamSeq?: number): void {
  const finished = envelope.timestamp;
  const started = (envelope.causation_id && ownValue(record.times, envelope.causation_id)) || finished;
  const step = {
    step: key,
    agent: envelope.agent,
    message_type: envelope.message_type,
    status: envelope.status,
    message_id: envelope.message_id,
    causation_id: envelope.causation_id,
    started_at: started,
    finished_at: finished,
    duration_ms: Math.max(0, Date.parse(finished) - Date.parse(started)),
    attempt: envelope.attempt,
  };
  const later = streamSeq === undefined ? -1 : record.steps.findIndex((s) => (ownValue(record.seen, s.step) ?? -1) > streamSeq);
  if (later === -1) {
    record.steps = [...record.steps, step];
    record.next_steps = [...envelope.next_steps];
  } else {
    record.steps = [...record.steps.slice(0, later), step, ...record.steps.slice(later)];
  }
  if (!record.agents_involved.includes(envelope.agent)) record.agents_involved = [...record.agents_involved, envelope.agent];
}

/** A status change the hub must announce with a `status_update` envelope. */
export interface StatusChange {
  status: WorkflowStatus;
  previous: WorkflowStatus;
  reason: string;
  step: MessageType | null;
  error: ErrorDetailsShape | null;
}

export type Effect = 'applied' | 'redelivered' | 'duplicate' | 'late' | 'recorded';

export interface Transition {
  record: WorkflowRecord;
  effect: Effect;
  emits: StatusChange[];
  /** The workflow the hub must start: the retry this transition recorded (`record.retried_as`). */
  retry?: RetryStart;
}

/** The query of a retry: the retried workflow's own request, under the retry's correlation id. */
export interface RetryStart {
  correlation_id: string;
  tenant_id: string;
  payload: QueryPayload;
  /** Now plus the retried workflow's time budget (its deadline less its start). */
  deadline: string;
  /** The command that asked for it, the query's cause. */
  command: Envelope;
}
