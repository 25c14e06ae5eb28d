import { newMessageId } from './correlation-id';
import type { Envelope, EnvelopeOf } from './envelope';
import type { ErrorDetailsShape } from './errors';
import type { EnvelopeStatus, MessageType } from './message-type';
import { SCHEMA_VERSION } from './patterns';
import type { PayloadOf } from './payloads';
import { createTraceparent } from './trace-context';

export interface CreateEnvelopeInput<T extends MessageType> {
  messageType: T;
  correlationId: string;
  tenantId: string;
  agent: string;
  payload: PayloadOf<T>;
  /** The workflow's absolute deadline. */
  deadline: Date | string;
  status?: EnvelopeStatus;
  targetAgent?: string | null;
  nextSteps?: string[];
  /** Continue an incoming trace (e.g. an HTTP `traceparent`); a new trace otherwise. */
  traceparent?: string | null;
  now?: Date;
}

/** The first envelope of a workflow, minted at the edge: no causation, attempt 1. */
export function createEnvelope<T extends MessageType>(input: CreateEnvelopeInput<T>): EnvelopeOf<T> {
  const now = input.now ?? new Date();
  return {
    message_id: newMessageId(),
    correlation_id: input.correlationId,
    causation_id: null,
    tenant_id: input.tenantId,
    agent: input.agent,
    target_agent: input.targetAgent ?? null,
    message_type: input.messageType,
    status: input.status ?? 'success',
    timestamp: now.toISOString(),
    deadline: typeof input.deadline === 'string' ? input.deadline : input.deadline.toISOString(),
    attempt: 1,
    payload: input.payload,
    next_steps: input.nextSteps ?? [],
    error_details: null,
    schema_version: SCHEMA_VERSION,
    traceparent: createTraceparent(input.traceparent),
  } as EnvelopeOf<T>;
}

export interface DeriveEnvelopeInput<T extends MessageType> {
  messageType: T;
  agent: string;
  payload: PayloadOf<T>;
  status?: EnvelopeStatus;
  errorDetails?: ErrorDetailsShape | null;
  targetAgent?: string | null;
  nextSteps?: string[];
  /** Attempt number of the step that produced it (a retry counts up, keeping its idempotency key). */
  attempt?: number;
  now?: Date;
}

/**
 * An envelope caused by `parent`: same correlation id, tenant, deadline and trace, a child span,
 * and `causation_id = parent.message_id`.
 */
export function deriveEnvelope<T extends MessageType>(parent: Envelope, input: DeriveEnvelopeInput<T>): EnvelopeOf<T> {
  const now = input.now ?? new Date();
  return {
    message_id: newMessageId(),
    correlation_id: parent.correlation_id,
    causation_id: parent.message_id,
    tenant_id: parent.tenant_id,
    agent: input.agent,
    target_agent: input.targetAgent ?? null,
    message_type: input.messageType,
    status: input.status ?? (input.errorDetails ? 'error' : 'success'),
    timestamp: now.toISOString(),
    deadline: parent.deadline,
    attempt: input.attempt ?? 1,
    payload: input.payload,
    next_steps: input.nextSteps ?? [],
    error_details: input.errorDetails ?? null,
    schema_version: SCHEMA_VERSION,
    traceparent: createTraceparent(parent.traceparent),
  } as EnvelopeOf<T>;
}
