import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  Equals,
  IsArray,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsUUID,
  Matches,
  Max,
  Min,
  ValidateIf,
  ValidateNested,
} from 'class-validator';
import { IsDateTime } from './date-time.validator';
import { ErrorDetails } from './error-details';
import { ENVELOPE_STATUSES, MESSAGE_TYPES, type EnvelopeStatus, type MessageType } from './message-type';
import {
  AGENT_NAME_PATTERN,
  CORRELATION_ID_PATTERN,
  SCHEMA_VERSION,
  TENANT_ID_PATTERN,
  TRACEPARENT_PATTERN,
} from './patterns';
import type { PayloadOf } from './payloads';

/**
 * The unit of communication: every message on a workflow subject is one envelope, JSON-encoded.
 * The payload's shape depends on `message_type` (see `PAYLOAD_CLASSES`).
 */
export class Envelope<T extends MessageType = MessageType> {
  /** UUIDv7, unique per envelope. */
  @IsUUID('7', { message: 'message_id must be a UUIDv7' })
  message_id!: string;

  /** One per workflow, minted at the edge; subject-safe `[A-Za-z0-9_-]{1,128}`. */
  @Matches(CORRELATION_ID_PATTERN, { message: 'correlation_id must match [A-Za-z0-9_-]{1,128}' })
  correlation_id!: string;

  /** `message_id` of the envelope that caused this one; null on the first envelope of a workflow. */
  @IsOptional()
  @IsUUID('7', { message: 'causation_id must be a UUIDv7 or null' })
  causation_id!: string | null;

  /** The tenant that owns the workflow; `[a-z0-9][a-z0-9_-]{0,62}`. */
  @Matches(TENANT_ID_PATTERN, { message: 'tenant_id must match [a-z0-9][a-z0-9_-]{0,62}' })
  tenant_id!: string;

  /** The agent that published this envelope. */
  @Matches(AGENT_NAME_PATTERN, { message: 'agent must match [a-z][a-z0-9_-]{0,62}' })
  agent!: string;

  /** The intended next consumer, or null for whoever subscribes to the message type. */
  @IsOptional()
  @Matches(AGENT_NAME_PATTERN, { message: 'target_agent must match [a-z][a-z0-9_-]{0,62} or be null' })
  target_agent!: string | null;

  /** What this envelope is; selects the payload shape. */
  @IsIn(MESSAGE_TYPES, { message: `message_type must be one of ${MESSAGE_TYPES.join(', ')}` })
  message_type!: T;

  /** Outcome of the step that produced it. */
  @IsIn(ENVELOPE_STATUSES, { message: `status must be one of ${ENVELOPE_STATUSES.join(', ')}` })
  status!: EnvelopeStatus;

  /** When it was published, ISO 8601 UTC. */
  @IsDateTime({ message: 'timestamp must be an RFC 3339 date-time, e.g. 2026-11-30T10:30:00.000Z' })
  timestamp!: string;

  /** The workflow's absolute deadline, carried unchanged on every hop. */
  @IsDateTime({ message: 'deadline must be an RFC 3339 date-time, e.g. 2026-11-30T10:30:05.000Z' })
  deadline!: string;

  /** 1 for a first attempt; a retry of the same step keeps its idempotency key and counts up. */
  @IsInt()
  @Min(1)
  @Max(100)
  attempt!: number;

  /** The typed content for `message_type`. */
  @IsObject({ message: 'payload must be an object' })
  payload!: PayloadOf<T>;

  /** Agents expected to act next, in order; advisory for tracking, not routing. */
  @IsArray()
  @ArrayMaxSize(16)
  @Matches(AGENT_NAME_PATTERN, { each: true, message: 'each next_steps entry must be an agent name' })
  next_steps!: string[];

  /** Set when status is `error`: the error as `{error_type, error_message, retry_possible}`. */
  @ValidateIf((e: Envelope) => e.status === 'error' || (e.error_details !== null && e.error_details !== undefined))
  @IsObject({ message: 'error_details must be an object when status is error' })
  @ValidateNested()
  @Type(() => ErrorDetails)
  error_details!: ErrorDetails | null;

  /** Version of this contract; 1. */
  @Equals(SCHEMA_VERSION, { message: `schema_version must be ${SCHEMA_VERSION}` })
  schema_version!: number;

  /** W3C trace context of the span that published this envelope; mirrored in the `traceparent` header. */
  @IsOptional()
  @Matches(TRACEPARENT_PATTERN, { message: 'traceparent must be a W3C traceparent (version 00)' })
  traceparent?: string;
}

/** An envelope whose payload type is known. */
export type EnvelopeOf<T extends MessageType> = Envelope<T> & { payload: PayloadOf<T> };
