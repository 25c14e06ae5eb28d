import { workflowFilter } from '@chorus/envelope';
import type { Bus } from './nats.bus';
import { readOrdered } from './ordered-read';

/** One stored message of a workflow, as the audit trail shows it. */
export interface HistoryEntry {
  /** Sequence in the workflow stream. */
  seq: number;
  subject: string;
  /** When the stream stored it. */
  stored_at: string;
  /** The envelope as published (parsed JSON; not re-validated, so the trail shows what was sent). */
  envelope: unknown;
  /** Its `Nats-Msg-Id` (the idempotency key it was published under), if it had one. */
  idempotency_key?: string;
}

const decoder = new TextDecoder();

/**
 * A workflow's envelopes in stream order, read from the stream (the durable audit trail).
 * `since` skips the part of the stream stored before the workflow began.
 */
export async function readWorkflowHistory(
  bus: Bus,
  correlationId: string,
  options: { tenantId?: string; since?: Date } = {},
): Promise<HistoryEntry[]> {
  const out: HistoryEntry[] = [];
  const filter = workflowFilter({ tenantId: options.tenantId, correlationId });
  for await (const m of readOrdered(bus.js, bus.options.workflowStream, filter, { startTime: options.since })) {
    let envelope: unknown;
    try {
      envelope = JSON.parse(decoder.decode(m.data));
    } catch {
      envelope = { unparseable: Buffer.from(m.data).toString('base64') };
    }
    const key = m.headers?.get('Nats-Msg-Id');
    out.push({ seq: m.seq, subject: m.subject, stored_at: m.time.toISOString(), envelope, ...(key ? { idempotency_key: key } : {}) });
  }
  return out;
}
