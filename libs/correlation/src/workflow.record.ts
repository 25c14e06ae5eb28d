import type { WorkflowView } from '@chorus/envelope';

/**
 * What the hub stores per workflow: the public view plus its dedup bookkeeping. Stored as JSON in
 * the ledger bucket under `<tenant>.<correlation_id>`.
 */
export interface WorkflowRecord extends WorkflowView {
  /** Idempotency key of every envelope recorded → its stream sequence (a redelivery has the same). */
  seen: Record<string, number>;
  /** message_id → timestamp of each envelope recorded, to time the steps they cause. */
  times: Record<string, string>;
}

export function ledgerKey(tenantId: string, correlationId: string): string {
  return `${tenantId}.${correlationId}`;
}

/** The public view of a record (its bookkeeping stripped). */
export function toView(record: WorkflowRecord): WorkflowView {
  const { seen: _seen, times: _times, ...view } = record;
  // Records stored before the session and the retry links were kept have none.
  return { ...view, session_id: view.session_id ?? null, retry_of: view.retry_of ?? null, retried_as: view.retried_as ?? null };
}

export function toSummary(record: WorkflowView) {
  return {
    correlation_id: record.correlation_id,
    tenant_id: record.tenant_id,
    query: record.query,
    status: record.status,
    degraded: record.degraded,
    started_at: record.started_at,
    finished_at: record.finished_at,
    agents_involved: record.agents_involved,
    duplicates_dropped: record.duplicates_dropped,
  };
}
