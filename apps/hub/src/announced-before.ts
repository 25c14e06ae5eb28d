import { readWorkflowHistory, type Bus } from '@chorus/bus';
import { HUB_AGENT, recordAnnouncement, type StatusChange, type WorkflowRecord } from '@chorus/correlation';
import { createEnvelope, deriveEnvelope, idempotencyKey, parseEnvelope, type Envelope, type StatusUpdatePayload } from '@chorus/envelope';
import { unbound, type Logger } from '@chorus/observability';

/** The envelope that caused a change (none for a timeout), and when the stream stored it, if known. */
export interface Cause {
  cause?: Envelope;
  /** The stream's clock (HandlerContext.storedAt); the envelope's own `timestamp` is its publisher's. */
  causeStoredAt?: () => number;
}

/** How long ago the cause was published: by the stream's clock when known (a publisher's clock ahead must not make an old envelope look fresh). */
export function causeAgeMs({ cause, causeStoredAt }: Cause): number {
  if (!cause) return Infinity;
  return Date.now() - (causeStoredAt ? causeStoredAt() : Date.parse(cause.timestamp));
}

/** An announcement found in the stream: what the hub records in its place. */
export interface StoredAnnouncement {
  envelope: Envelope;
  key: string;
  seq: number;
}

/**
 * The status changes among `emits` that a hub already announced, found in the stream, when the
 * stream may no longer drop a repeat of them by its duplicate window: a hub that announced, then
 * lost its lease before saving, leaves the change to the hub that takes over, which announces it
 * again. Within the window the repeat is dropped (same `Nats-Msg-Id`); past it (a takeover minutes
 * later, a backlog), it was stored, and a workflow carried two `completed` announcements. The
 * announcement comes after its cause, so with a cause younger than half the window, any earlier
 * one is inside it and nothing is read; otherwise (an old cause, a timeout, which has none) the
 * workflow's status updates are read, a few requests (docs/hub.md, history reads).
 */
export async function announcedBefore(
  bus: Bus,
  record: WorkflowRecord,
  emits: readonly StatusChange[],
  cause: Cause,
): Promise<Map<string, StoredAnnouncement>> {
  const found = new Map<string, StoredAnnouncement>();
  if (emits.length === 0 || causeAgeMs(cause) < bus.options.duplicateWindowMs / 2) return found;
  // Only this workflow's: stored after the first envelope its record saw. The stream keeps an id
  // longer than the ledger does, and a reused one (an idempotency key submitted again a day later)
  // has the earlier workflow's announcements under the same keys.
  const first = Math.min(...Object.values(record.seen));
  const updates = await readWorkflowHistory(bus, record.correlation_id, { tenantId: record.tenant_id, types: ['status_update'], fromSeq: Number.isFinite(first) ? first + 1 : 1 });
  for (const change of emits) {
    const key = idempotencyKey(record.correlation_id, 'status_update', HUB_AGENT, change.status);
    for (const entry of updates) {
      if (entry.idempotency_key !== key || !(entry.seq > first)) continue;
      const parsed = parseEnvelope(entry.envelope, { subject: entry.subject });
      const announced = parsed.ok && parsed.value.agent === HUB_AGENT && (parsed.value.payload as StatusUpdatePayload).workflow_status === change.status;
      if (parsed.ok && announced) found.set(change.status, { envelope: parsed.value, key, seq: entry.seq });
    }
  }
  return found;
}

/**
 * Publishes a `status_update`, caused by the envelope that changed the status (none for a
 * timeout), and returns the record with the announcement recorded as seen.
 */
export async function announce(bus: Bus, record: WorkflowRecord, change: StatusChange, log: Logger, cause?: Envelope): Promise<WorkflowRecord> {
  const payload: StatusUpdatePayload = {
    workflow_status: change.status,
    previous_status: change.previous,
    step: change.step,
    reason: change.reason,
    error: change.error,
  };
  const base = { messageType: 'status_update' as const, agent: HUB_AGENT, payload, nextSteps: [] };
  const update = cause
    ? deriveEnvelope(cause, base)
    : createEnvelope({ ...base, correlationId: record.correlation_id, tenantId: record.tenant_id, deadline: record.deadline });
  const published = await bus.publish(update, { part: change.status, reportDuplicate: false });
  log.info({ ...unbound(log, { correlation_id: record.correlation_id }), status: change.status, reason: change.reason }, `workflow ${change.status}`);
  return recordAnnouncement(record, update, { idempotencyKey: published.idempotencyKey, streamSeq: published.seq });
}
