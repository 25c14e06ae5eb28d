import type { ErrorDetailsShape } from './errors';
import { isTerminalStatus, type MessageType, type WorkflowStatus } from './message-type';
import type { ResponsePayload } from './payloads/response.payload';
import type { Degradation } from './payloads/tool-results.payload';

/** One step of a workflow: one logical message (keyed by its idempotency key, not by agent). */
export interface WorkflowStep {
  /** The step's key: the idempotency key of the envelope that completed it. */
  step: string;
  agent: string;
  message_type: MessageType;
  /** The envelope's status: success, error or pending. */
  status: string;
  message_id: string;
  causation_id: string | null;
  /** When the step's input was published (the causing envelope's timestamp). */
  started_at: string;
  /** When the step's output was published. */
  finished_at: string;
  duration_ms: number;
  attempt: number;
}

/** A failure recorded on a workflow. */
export interface WorkflowError extends ErrorDetailsShape {
  /** The agent that failed. */
  agent: string;
  /** The message type it was handling. */
  step: string | null;
  at: string;
  /** The envelope that reported it (a failure report, a refused command); absent for a timeout. */
  message_id?: string;
}

/** The hub's view of a workflow: what `GET /v1/workflows/:id` returns. */
export interface WorkflowView {
  correlation_id: string;
  tenant_id: string;
  /** The query text, once the query envelope has been seen. */
  query: string | null;
  /** The session the query named (`session_id`; an A2A task's `contextId`), or null. */
  session_id: string | null;
  status: WorkflowStatus;
  /** True on a workflow that completed without every lens it planned. */
  degraded: boolean;
  /** The missing lenses, when degraded. */
  degradations: Degradation[];
  started_at: string;
  updated_at: string;
  finished_at: string | null;
  deadline: string;
  agents_involved: string[];
  steps: WorkflowStep[];
  next_steps: string[];
  errors: WorkflowError[];
  /** Envelopes the hub received again and dropped. */
  duplicates_dropped: number;
  /** Envelopes that arrived after the workflow had finished; recorded, never applied. */
  late_envelopes: number;
  /** The response payload, once completed. */
  result: ResponsePayload | null;
  /** The workflow this one retries, or null. */
  retry_of: string | null;
  /** The workflow that retries this one (its `orchestration_command` `retry`), or null. */
  retried_as: string | null;
}

/**
 * Why a workflow cannot be retried (an `orchestration_command` `retry`), or null when it can be: only
 * a workflow that ended without a complete answer (failed, timed out, cancelled, or completed
 * degraded) is retried. The hub decides; the ingress and the CLI ask first to answer at once.
 */
export function retryRefusal(workflow: Pick<WorkflowView, 'status' | 'degraded' | 'correlation_id'>): string | null {
  if (!isTerminalStatus(workflow.status)) {
    return `workflow ${workflow.correlation_id} is ${workflow.status}: only a workflow that has ended can be retried (cancel it, or wait for its end)`;
  }
  if (workflow.status === 'completed' && !workflow.degraded) {
    return `workflow ${workflow.correlation_id} completed with every lens it planned: there is nothing to retry (submit the query again to run it anew)`;
  }
  return null;
}

/**
 * The time budget a retry gets, from when the hub applies its command: the one the hub held the
 * workflow to (its deadline less its start), or a second if that cannot be read.
 */
export function retryBudgetMs(workflow: Pick<WorkflowView, 'deadline' | 'started_at'>): number {
  const budget = Date.parse(workflow.deadline) - Date.parse(workflow.started_at);
  return budget > 0 ? budget : 1000;
}

/** A row of `GET /v1/workflows`. */
export interface WorkflowSummary {
  correlation_id: string;
  tenant_id: string;
  query: string | null;
  status: WorkflowStatus;
  degraded: boolean;
  started_at: string;
  finished_at: string | null;
  agents_involved: string[];
  duplicates_dropped: number;
}

/** Requests the hub answers over request/reply. */
export interface WorkflowRequest {
  correlation_id: string;
  /** Scope to a tenant; another tenant's workflow is not found. */
  tenant_id?: string;
}

export interface HistoryReply {
  correlation_id: string;
  /** The workflow's envelopes in stream order. */
  envelopes: unknown[];
}

export interface ListRequest {
  tenant_id?: string;
  status?: WorkflowStatus;
  agent?: string;
  since?: string;
  until?: string;
  limit?: number;
  cursor?: string;
}

export interface ListReply {
  workflows: WorkflowSummary[];
  next_cursor: string | null;
  /**
   * False when the list ran out at the end of the hub's recent index (the newest
   * `CHORUS_HUB_RECENT` workflows) while the ledger holds older ones: those are not listed, but
   * each is still found by its id.
   */
  complete: boolean;
}

/** A re-publish the workflow stream dropped (same `Nats-Msg-Id` inside its duplicate window). */
export interface DuplicateNotice {
  idempotency_key: string;
  correlation_id: string;
  tenant_id: string;
  message_type: string;
  /** The agent whose publish was dropped. */
  agent: string;
  /** message_id of the dropped envelope. */
  message_id: string;
  /** Stream sequence of the message already stored under that key. */
  stored_seq: number;
  dropped_at: string;
}
