import type { MsgRequest } from '@nats-io/jetstream';
import { headers as natsHeaders } from '@nats-io/transport-node';
import { DEAD_LETTER_PREFIX, boundFieldErrors, deadLetterSubject, parseWorkflowSubject, type ErrorDetailsShape, type FieldError } from '@chorus/envelope';
import type { Bus } from './nats.bus';
import { ChorusHeaders } from './headers';
import { readOrdered } from './ordered-read';

export const DEAD_LETTER_REASONS = ['invalid_envelope', 'step_failed'] as const;
export type DeadLetterReason = (typeof DEAD_LETTER_REASONS)[number];

/** What lands on `chorus.dlq.<tenant>.<message_type>`: the original message and why it was given up. */
export interface DeadLetter {
  /** invalid_envelope: failed validation, never processed. step_failed: its handler gave up. */
  reason: DeadLetterReason;
  /** The subject it arrived on. */
  subject: string;
  /** Its sequence in the workflow stream. */
  stream_seq: number;
  /** The durable consumer that gave it up. */
  consumer: string;
  /** Correlation id and tenant from the subject, when the subject is a valid workflow subject. */
  correlation_id: string | null;
  tenant_id: string | null;
  /** Validation errors, for `invalid_envelope`: every invalid field (the first 50, then how many more). */
  errors: FieldError[];
  /** The error the handler raised, for `step_failed`. */
  error: ErrorDetailsShape | null;
  /** How many times it was delivered. */
  deliveries: number;
  /** When it was dead-lettered. */
  dead_lettered_at: string;
  /**
   * The original body, byte for byte, as UTF-8 text when it is valid UTF-8 (and not mostly escapes),
   * else base64: its first 256 KiB, or less when the dead letter would not fit in a message.
   */
  data: string;
  data_encoding: 'utf8' | 'base64';
}

/** The most of the original body a dead letter keeps. */
export const MAX_DEAD_LETTER_DATA_BYTES = 256 * 1024;
const MAX_ERROR_MESSAGE_CHARS = 4000;
const FEW_ERRORS = 3;
/** Room left in a message for the dead letter's headers and the JSON around its fields. */
const HEADROOM_BYTES = 8 * 1024;
// ignoreBOM: a leading byte-order mark is part of the original body, kept like any other byte.
const strictDecoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const encoder = new TextEncoder();

export interface DeadLetterInput {
  reason: DeadLetterReason;
  subject: string;
  streamSeq: number;
  consumer: string;
  data: Uint8Array;
  deliveries: number;
  errors?: FieldError[];
  error?: ErrorDetailsShape | null;
}

/**
 * The dead letter of a message, at most `maxBytes` once JSON-encoded: its errors are bounded (see
 * boundFieldErrors), and its copy of the body is cut to fit, so that it can always be stored.
 */
export function createDeadLetter(input: DeadLetterInput, now = new Date(), maxBytes = 1024 * 1024): DeadLetter {
  const parts = parseWorkflowSubject(input.subject);
  const letter: DeadLetter = {
    reason: input.reason,
    subject: input.subject,
    stream_seq: input.streamSeq,
    consumer: input.consumer,
    correlation_id: parts?.correlationId ?? null,
    tenant_id: parts?.tenantId ?? null,
    errors: boundFieldErrors(input.errors ?? []),
    error: input.error ? { ...input.error, error_message: input.error.error_message.slice(0, MAX_ERROR_MESSAGE_CHARS) } : null,
    deliveries: input.deliveries,
    dead_lettered_at: now.toISOString(),
    data: '',
    data_encoding: 'utf8',
  };
  const size = (l: DeadLetter) => encoder.encode(JSON.stringify(l)).length;
  // A server with a small max_payload may not take 50 long field errors: the first few then.
  if (size(letter) > maxBytes - HEADROOM_BYTES) letter.errors = boundFieldErrors(input.errors ?? [], FEW_ERRORS);
  const room = Math.max(0, maxBytes - HEADROOM_BYTES - size(letter));
  let body = input.data.subarray(0, MAX_DEAD_LETTER_DATA_BYTES);
  for (;;) {
    const { data, encoding, size } = encodeData(body);
    if (size <= room || body.length === 0) return { ...letter, data, data_encoding: encoding };
    body = body.subarray(0, Math.floor((body.length * room) / size));
  }
}

/**
 * UTF-8 text when the body is valid UTF-8 and that is no longer than base64 once JSON-escaped
 * (control characters escape to six bytes each), else base64; `size` is the encoded JSON string's.
 */
function encodeData(body: Uint8Array): { data: string; encoding: DeadLetter['data_encoding']; size: number } {
  const base64 = Buffer.from(body).toString('base64');
  try {
    const text = strictDecoder.decode(body);
    const size = encoder.encode(JSON.stringify(text)).length;
    if (size <= base64.length + 2) return { data: text, encoding: 'utf8', size };
  } catch {
    // not UTF-8: base64
  }
  return { data: base64, encoding: 'base64', size: base64.length + 2 };
}

/** The largest dead letter the connected server accepts. */
export function deadLetterLimit(bus: Bus): number {
  return bus.nc.info?.max_payload ?? 1024 * 1024;
}

/**
 * Stores a dead letter. Its `Nats-Msg-Id` is derived from the source message, so when several
 * consumers reject the same invalid envelope (its agent and the hub) it is stored once, and counted
 * once: only by the publish the stream stored.
 */
export async function publishDeadLetter(bus: Bus, letter: DeadLetter): Promise<void> {
  const h = natsHeaders();
  h.set(ChorusHeaders.DeadLetterReason, letter.reason);
  if (letter.correlation_id) h.set(ChorusHeaders.CorrelationId, letter.correlation_id);
  const who = letter.reason === 'invalid_envelope' ? 'invalid' : letter.consumer;
  const ack = await bus.js.publish(deadLetterSubject(letter.subject), encoder.encode(JSON.stringify(letter)), {
    msgID: `dlq.${bus.options.workflowStream}.${letter.stream_seq}.${who}`,
    headers: h,
  });
  if (!ack.duplicate) bus.metrics.deadLetters.inc({ reason: letter.reason });
}

/** A dead letter as read back, with where the dead-letter stream holds it. */
export type StoredDeadLetter = (DeadLetter & { dlq_seq: number }) | UnreadableDeadLetter;

/**
 * A message on a dead-letter subject that is not a dead letter (not a JSON object: anyone allowed to
 * publish there can store junk): listed with why and its body, so one such message does not make
 * the whole list unreadable.
 */
export interface UnreadableDeadLetter {
  dlq_seq: number;
  /** The dead-letter subject it was stored on. */
  dlq_subject: string;
  /** Why it is not a dead letter. */
  unreadable: string;
  data: string;
  data_encoding: DeadLetter['data_encoding'];
}

/** A message of the dead-letter stream as a {@link StoredDeadLetter}: never throws, whatever its body. */
export function readStoredDeadLetter(data: Uint8Array, seq: number, subject: string): StoredDeadLetter {
  let parsed: unknown;
  let why: string;
  try {
    parsed = JSON.parse(strictDecoder.decode(data));
    why = `not a dead letter: a JSON ${parsed === null ? 'null' : Array.isArray(parsed) ? 'array' : typeof parsed}, not an object`;
  } catch (e) {
    why = `not a dead letter: ${e instanceof Error ? e.message : String(e)}`;
  }
  if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return { ...(parsed as DeadLetter), dlq_seq: seq };
  const { data: body, encoding } = encodeData(data.subarray(0, MAX_DEAD_LETTER_DATA_BYTES));
  return { dlq_seq: seq, dlq_subject: subject, unreadable: why, data: body, data_encoding: encoding };
}

/**
 * The newest dead letters, newest first: at most `limit`, of one tenant when `tenantId` is given
 * (its dead-letter subjects), looked for among the last `scan` stored (10,000 by default: the
 * stream keeps thirty days of them, too many to read for a page).
 */
export async function readDeadLetters(bus: Bus, options: { limit: number; tenantId?: string; scan?: number }): Promise<StoredDeadLetter[]> {
  const stream = bus.options.deadLetterStream;
  const { state } = await bus.jsm.streams.info(stream);
  if (state.messages === 0) return [];
  const scan = options.tenantId ? Math.max(options.limit, options.scan ?? 10_000) : options.limit;
  const startSeq = Math.max(state.first_seq, state.last_seq - scan + 1);
  const filter = `${DEAD_LETTER_PREFIX}.${options.tenantId ?? '*'}.*`;
  const letters: StoredDeadLetter[] = [];
  const keep = (m: { data: Uint8Array; seq: number; subject: string }) => {
    letters.push(readStoredDeadLetter(m.data, m.seq, m.subject));
    if (letters.length > options.limit) letters.shift();
  };
  for (let from = startSeq; ; ) {
    for await (const m of readOrdered(bus.js, stream, filter, { startSeq: from })) {
      keep(m);
      from = m.seq + 1;
    }
    // An ordered read of a wildcard filter from a start sequence stops when the server counts
    // nothing pending, and nats-server 2.9 once counted 0 one message early (a history read missed
    // its last message). One request for the next match past what was read (the stream's leader
    // answers it) says whether the read is complete up to where the stream ended when it began.
    const missed = await bus.jsm.streams.getMessage(stream, { next_by_subj: filter, seq: from } as unknown as MsgRequest);
    if (!missed || missed.seq > state.last_seq) break;
    keep(missed);
    from = missed.seq + 1;
  }
  return letters.reverse();
}
