import type { Bus } from '@chorus/bus';
import { workflowSubject, type DuplicateNotice, type MessageType } from '@chorus/envelope';

/**
 * Why the stream does not bear out a duplicate notice (whose subject already names its workflow,
 * `duplicateNoticeProblem`), or null: the message it says the dropped publish duplicated must be
 * stored on that workflow's subject under the notice's key. Any user that publishes envelopes may
 * publish notices; without this, one could raise any workflow's `duplicates_dropped` at will. A
 * publish refused for not being the first on its subject names no message (`stored_seq` 0): then
 * the subject must hold one. Errors reading the stream are thrown (the notice is tried again).
 */
export async function unsupportedDuplicateNotice(bus: Bus, notice: DuplicateNotice): Promise<string | null> {
  const subject = workflowSubject(notice.tenant_id, notice.message_type as MessageType, notice.correlation_id);
  const seq = notice.stored_seq;
  if (!Number.isSafeInteger(seq) || seq < 0) return 'stored_seq is not a stream sequence';
  if (seq === 0) return (await bus.lastStoredMessage(subject)) ? null : `the stream holds nothing on ${subject}`;
  const stored = await bus.storedAt(seq);
  if (!stored) return `the stream holds nothing at ${seq}`;
  if (stored.subject !== subject) return `the stream's message ${seq} is on ${stored.subject}, not ${subject}`;
  if (stored.header?.get('Nats-Msg-Id') !== notice.idempotency_key) return `the stream's message ${seq} was stored under another key than ${JSON.stringify(notice.idempotency_key)}`;
  return null;
}
