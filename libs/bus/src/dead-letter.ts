import { headers as natsHeaders } from '@nats-io/transport-node';
import { deadLetterSubject, parseWorkflowSubject, type ErrorDetailsShape, type FieldError } from '@chorus/envelope';
import type { Bus } from './nats.bus';
import { ChorusHeaders } from './headers';

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
  /** Validation errors, for `invalid_envelope`: every invalid field. */
  errors: FieldError[];
  /** The error the handler raised, for `step_failed`. */
  error: ErrorDetailsShape | null;
  /** How many times it was delivered. */
  deliveries: number;
  /** When it was dead-lettered. */
  dead_lettered_at: string;
  /** The original body, as UTF-8 text when it is valid UTF-8, else base64. */
  data: string;
  data_encoding: 'utf8' | 'base64';
}

const MAX_DATA_BYTES = 256 * 1024;
const strictDecoder = new TextDecoder('utf-8', { fatal: true });
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

export function createDeadLetter(input: DeadLetterInput, now = new Date()): DeadLetter {
  const parts = parseWorkflowSubject(input.subject);
  const body = input.data.subarray(0, MAX_DATA_BYTES);
  let data: string;
  let encoding: DeadLetter['data_encoding'] = 'utf8';
  try {
    data = strictDecoder.decode(body);
  } catch {
    data = Buffer.from(body).toString('base64');
    encoding = 'base64';
  }
  return {
    reason: input.reason,
    subject: input.subject,
    stream_seq: input.streamSeq,
    consumer: input.consumer,
    correlation_id: parts?.correlationId ?? null,
    tenant_id: parts?.tenantId ?? null,
    errors: input.errors ?? [],
    error: input.error ?? null,
    deliveries: input.deliveries,
    dead_lettered_at: now.toISOString(),
    data,
    data_encoding: encoding,
  };
}

/**
 * Stores a dead letter. Its `Nats-Msg-Id` is derived from the source message, so when several
 * consumers reject the same invalid envelope (its agent and the hub) it is stored once.
 */
export async function publishDeadLetter(bus: Bus, letter: DeadLetter): Promise<void> {
  const h = natsHeaders();
  h.set(ChorusHeaders.DeadLetterReason, letter.reason);
  if (letter.correlation_id) h.set(ChorusHeaders.CorrelationId, letter.correlation_id);
  const who = letter.reason === 'invalid_envelope' ? 'invalid' : letter.consumer;
  bus.metrics.deadLetters.inc({ reason: letter.reason });
  await bus.js.publish(deadLetterSubject(letter.subject), encoder.encode(JSON.stringify(letter)), {
    msgID: `dlq.${bus.options.workflowStream}.${letter.stream_seq}.${who}`,
    headers: h,
  });
}
