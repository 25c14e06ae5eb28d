import { MESSAGE_TYPES, parseWorkflowSubject, workflowFilter, workflowSubject, type MessageType } from '@chorus/envelope';
import type { MsgRequest } from '@nats-io/jetstream';
import type { MsgHdrs } from '@nats-io/transport-node';
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

/** What the two ways of reading give for each stored message. */
interface Stored {
  seq: number;
  subject: string;
  time: Date;
  data: Uint8Array;
  headers?: MsgHdrs;
}

const decoder = new TextDecoder();

/**
 * A workflow's envelopes in stream order, read from the stream (the durable audit trail): the
 * messages on the subjects of its message types (`types`, by default every one). `since` leaves out
 * what was stored before the workflow began; `fromSeq`, what the stream stored before that
 * sequence, which the server then need not look through (a reader that knows where the part it
 * wants starts: a cold nats-server 2.9 took a second and more to find a recent workflow's first
 * message from sequence 1 in a stream of millions).
 *
 * With the tenant known, each message type's subject is read on its own and the reads are merged
 * by sequence; see {@link readLiteral}. Without it (a read that does not know the workflow's
 * tenant), one ordered consumer reads `chorus.wf.*.*.<id>`, which costs in proportion to the
 * stream (see there).
 */
export async function readWorkflowHistory(
  bus: Bus,
  correlationId: string,
  options: { tenantId?: string; since?: Date; types?: readonly MessageType[]; fromSeq?: number } = {},
): Promise<HistoryEntry[]> {
  const types = options.types ?? MESSAGE_TYPES;
  const stored = options.tenantId
    ? await readLiteral(bus, options.tenantId, correlationId, types, options.fromSeq ?? 1)
    : (await readWildcard(bus, correlationId, options.since)).filter((m) => m.seq >= (options.fromSeq ?? 1) && types.includes(parseWorkflowSubject(m.subject)?.messageType as MessageType));
  const since = options.since?.getTime();
  const out: HistoryEntry[] = [];
  for (const m of stored) {
    if (since !== undefined && m.time.getTime() < since) continue;
    const envelope = historyEnvelope(m.data);
    const key = m.headers?.get('Nats-Msg-Id');
    out.push({ seq: m.seq, subject: m.subject, stored_at: m.time.toISOString(), envelope, ...(key ? { idempotency_key: key } : {}) });
  }
  return out;
}

/**
 * A stored message as the audit trail shows it: the JSON object it holds, or, for a body that is not
 * one (not JSON, or JSON `null`, an array, a number or a string: junk anyone allowed to publish on a
 * workflow's subjects can store), `{unparseable: <the body in base64>}`, so that every entry is an
 * object (`GET /v1/workflows/:id/history` says so) and readers that look into entries (the CLI, the
 * dashboard) do not fail on it.
 */
export function historyEnvelope(data: Uint8Array): object {
  try {
    const parsed: unknown = JSON.parse(decoder.decode(data));
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed;
  } catch {
    // not JSON: below
  }
  return { unparseable: Buffer.from(data).toString('base64') };
}

/**
 * Every message type's subject (`chorus.wf.<tenant>.<type>.<id>`, a literal subject) read by
 * "next message on this subject from this sequence" requests, all types at once, merged by
 * sequence, up to the stream's last message when the read began. The server finds a literal
 * subject through its per-subject index, so the read costs the same whatever the stream holds: on
 * nats-server 2.9.10, 3 to 8 ms for a workflow in a stream of 10k or of 1M messages (`npm run
 * bench:history`, a warm server). An ordered consumer filtered on `chorus.wf.<tenant>.*.<id>` (how
 * this was read before) makes the server match the filter against the subjects of the whole
 * stream, or of everything stored since `since`: 10 to 16 ms at 10k messages, 0.3 to 0.4 s at
 * 400k, 1 to 1.6 s at 1M; every history read, SSE stream and hub sweep check paid it, and a stream keeps days of
 * workflows.
 *
 * The requests go to the stream's leader (`$JS.API.STREAM.MSG.GET`, which nats-server has taken
 * `next_by_subj` in since 2.9; nats.js types it for direct gets only), not to a direct get, which
 * any replica answers and one that lags could miss what was just stored.
 *
 * A subject with more than {@link GETS_PER_SUBJECT} messages (a flood of commands or status
 * updates) reads the rest through an ordered consumer on that literal subject, which is as flat.
 */
async function readLiteral(bus: Bus, tenantId: string, correlationId: string, types: readonly MessageType[], fromSeq: number): Promise<Stored[]> {
  const stream = bus.options.workflowStream;
  // The read is of the stream up to its last message now: the subjects are read one by one, so
  // without this bound a message stored meanwhile on one could be in the read while an earlier one
  // on another, read before it was stored, is not (a gap in what should be a prefix of the trail).
  const last = (await bus.jsm.streams.info(stream)).state.last_seq;
  const perType = await Promise.all(
    types.map(async (type) => {
      const subject = workflowSubject(tenantId, type, correlationId);
      const out: Stored[] = [];
      let next = Math.max(1, fromSeq);
      for (let i = 0; i < GETS_PER_SUBJECT; i++) {
        const m = await bus.jsm.streams.getMessage(stream, { next_by_subj: subject, seq: next } as unknown as MsgRequest);
        if (!m || m.seq > last) return out;
        out.push({ seq: m.seq, subject: m.subject, time: m.time, data: m.data, headers: m.header });
        next = m.seq + 1;
      }
      for await (const m of readOrdered(bus.js, stream, subject, { startSeq: next })) {
        if (m.seq > last) break;
        out.push({ seq: m.seq, subject: m.subject, time: m.time, data: m.data, headers: m.headers });
      }
      return out;
    }),
  );
  return perType.flat().sort((a, b) => a.seq - b.seq);
}

/** Requests per subject before the rest of it is read through a consumer. */
const GETS_PER_SUBJECT = 16;

/** One ordered consumer on `chorus.wf.*.*.<id>`, from `since`. */
async function readWildcard(bus: Bus, correlationId: string, since?: Date): Promise<Stored[]> {
  const out: Stored[] = [];
  const filter = workflowFilter({ correlationId });
  // From `since` (a `fromSeq` is applied by the caller: started at a sequence, this consumer once
  // missed the last message, on a busy machine).
  for await (const m of readOrdered(bus.js, bus.options.workflowStream, filter, { startTime: since })) {
    out.push({ seq: m.seq, subject: m.subject, time: m.time, data: m.data, headers: m.headers });
  }
  return out;
}
