import { ALL_MESSAGE_TYPES, durableName, readWorkflowHistory, type Bus } from '@chorus/bus';
import { HUB_AGENT, type WorkflowRecord } from '@chorus/correlation';
import { parseEnvelope, workflowSubject } from '@chorus/envelope';

/** A JetStream consumer's state, as the bus reads it (the hub does not import NATS itself). */
export type ConsumerInfo = Awaited<ReturnType<Bus['jsm']['consumers']['info']>>;

/** The active hub's durable consumer of the workflow stream (every message type). */
const HUB_CONSUMER = durableName(HUB_AGENT, ALL_MESSAGE_TYPES);

/**
 * Whether something that ends the workflow was stored in the stream by `deadline` and the hub has
 * not handled yet: its response, an agent's failure report (any envelope with status `error`) or a
 * cancel. Only what lies past the hub consumer's acknowledgement floor can still be waiting: an
 * envelope at or below it was handled already (applied, or refused: invalid, a duplicate, or an
 * effect the ledger could not store), so it will never end the workflow. When the consumer has
 * nothing pending or in flight, everything stored has been handled. The response, the common case,
 * is one lookup; the others need the workflow's history. An envelope the hub would refuse
 * (invalid) never counts.
 */
export async function endStoredBy(
  bus: Bus,
  record: WorkflowRecord,
  deadline: number,
  clockSkewMs: number,
  consumerInfo: () => Promise<ConsumerInfo> = () => hubConsumerInfo(bus),
): Promise<boolean> {
  const { tenant_id: tenantId, correlation_id: correlationId } = record;
  const consumer = await consumerInfo();
  if (consumer.num_pending === 0 && consumer.num_ack_pending === 0) return false;
  const handledUpTo = consumer.ack_floor.stream_seq;
  const subject = workflowSubject(tenantId, 'response', correlationId);
  const response = await bus.lastStoredMessage(subject);
  if (response !== null && response.seq > handledUpTo && response.time.getTime() <= deadline && parseEnvelope(response.data, { subject }).ok) return true;
  const applied = new Set(Object.values(record.seen));
  const since = new Date(Date.parse(record.started_at) - clockSkewMs);
  // Only what its consumer has not handled can be an end it has not applied: read from there.
  for (const entry of await readWorkflowHistory(bus, correlationId, { tenantId, since, fromSeq: handledUpTo + 1 })) {
    if (Date.parse(entry.stored_at) > deadline) break;
    if (applied.has(entry.seq)) continue;
    const parsed = parseEnvelope(entry.envelope, { subject: entry.subject });
    if (!parsed.ok) continue;
    const e = parsed.value;
    // Its own announcements, and a copy of an envelope already applied under another key.
    if (e.agent === HUB_AGENT || Object.hasOwn(record.times, e.message_id)) continue;
    // A response too: junk stored after it on its subject hides it from the lookup above.
    if (e.message_type === 'response' || e.status === 'error' || (e.message_type === 'orchestration_command' && (e.payload as { command?: unknown }).command === 'cancel')) return true;
  }
  return false;
}

/** The hub consumer's state: what it has handled (its acknowledgement floor) and what it has not. */
export function hubConsumerInfo(bus: Bus): Promise<ConsumerInfo> {
  return bus.jsm.consumers.info(bus.options.workflowStream, HUB_CONSUMER);
}
