import { parseEnvelope, queryRequestDifferences, workflowSubject, type Envelope, type QueryPayload, type WorkflowView } from '@chorus/envelope';
import { askUntil } from './ask-until';
import { IdempotencyKeyExpiredError, IdempotencyKeyReusedError } from './bus.errors';
import type { Bus } from './nats.bus';
import { readAnnouncedEnd } from './workflow.watch';

/**
 * Refuses a keyed query when the stream holds another query for the key's workflow: the stored
 * payload is compared with this request's as the session strategy compares submissions
 * ({@link queryRequestDifferences}: the query trimmed, the profiles as a set), as far as the
 * request says something (`top_k` left out takes each process's default, so it is compared only
 * when given; `deadline_ms` is relative to each submission and never compared). When the stream no longer holds the query
 * (past its retention), or it cannot be read, nothing can be compared and the request goes on as
 * before: the check guards against mistakes, it is not a lock.
 */
export async function checkSameQuery(bus: Bus, envelope: Envelope<'query'>, request: { top_k?: number }): Promise<void> {
  const subject = workflowSubject(envelope.tenant_id, 'query', envelope.correlation_id);
  const stored = await bus.lastStored(subject).catch(() => null);
  const parsed = stored ? parseEnvelope(stored, { subject }) : undefined;
  if (!parsed?.ok) return;
  const fields = queryRequestDifferences(parsed.value.payload as QueryPayload, envelope.payload, { compareTopK: request.top_k !== undefined });
  if (fields.length > 0) throw new IdempotencyKeyReusedError(envelope.correlation_id, fields);
}

/**
 * For a keyed query the hub has no record of: null when the stream holds no end the hub announced
 * for its workflow (a new key, or a workflow not recorded yet: its query is published, as before);
 * the hub's view if it shows the workflow after all within `waitMs` (it saves an end right after
 * announcing it); otherwise the workflow ended and has left the ledger, and IdempotencyKeyExpiredError.
 * Published again, its query would open a record of a workflow every agent knows has ended, which
 * would never run. A stream that cannot be read is treated as holding no end, as {@link checkSameQuery} does.
 */
export async function recordOfEnded(bus: Bus, envelope: Envelope<'query'>, waitMs: number, read: () => Promise<WorkflowView | null>): Promise<WorkflowView | null> {
  const { correlation_id: id, tenant_id: tenant } = envelope;
  const end = await readAnnouncedEnd(bus, tenant, id).catch(() => null);
  if (!end) return null;
  const recorded = await askUntil(Date.now() + waitMs, read);
  if (recorded) return recorded;
  throw new IdempotencyKeyExpiredError(id, end.status, end.at);
}
