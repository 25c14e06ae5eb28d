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

export function addStep(record: WorkflowRecord, envelope: Envelope, key: string): void {
  const finished = envelope.timestamp;
  const started = (envelope.causation_id && ownValue(record.times, envelope.causation_id)) || finished;
  record.steps = [
    ...record.steps,
    {
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
    },
  ];
  if (!record.agents_involved.includes(envelope.agent)) record.agents_involved = [...record.agents_involved, envelope.agent];
  record.next_steps = [...envelope.next_steps];
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
