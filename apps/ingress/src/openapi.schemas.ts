import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { RetryStarted } from '@chorus/bus';
import {
  DEGRADATION_REASONS,
  MESSAGE_TYPES,
  WORKFLOW_STATUSES,
  type Degradation,
  type DegradationReason,
  type FieldError,
  type HistoryReply,
  type ListReply,
  type MessageType,
  type ResponsePayload,
  type WorkflowError,
  type WorkflowStatus,
  type WorkflowStep,
  type WorkflowSummary,
  type WorkflowView,
} from '@chorus/envelope';
import type { ConflictBody, HttpErrorBody, WaitTimedOutBody } from './http.errors';
import type { Accepted, Cancelling } from './http.bodies';

/*
 * The response bodies of the HTTP API as OpenAPI schemas. Each class `implements` the type the
 * route returns, so a field added to that type fails the build until it is described here too;
 * test/front-door.int-spec.ts checks real answers against the published document.
 */

export class FieldErrorSchema implements FieldError {
  @ApiProperty({ description: 'Dotted path of the field (`top_k`, `payload.query`), a header or query parameter name, or `$` for the whole body' })
  field!: string;

  @ApiProperty({ type: [String], description: 'Every rule the value broke, in plain words' })
  messages!: string[];
}

export class ErrorBodySchema implements HttpErrorBody {
  @ApiProperty({ example: 400 })
  statusCode!: number;

  @ApiProperty({ example: 'Bad Request' })
  error!: string;

  @ApiProperty()
  message!: string;

  @ApiPropertyOptional({ type: [FieldErrorSchema], description: 'Every invalid field (400), or what differs (422)' })
  errors?: FieldError[];
}

/** A 409 of cancel, retry or an expired Idempotency-Key: the error body, with the workflow's status and why. */
export class ConflictBodySchema extends ErrorBodySchema implements ConflictBody {
  @ApiProperty({ enum: WORKFLOW_STATUSES })
  status!: WorkflowStatus;

  @ApiPropertyOptional({
    enum: ['NOT_RETRYABLE', 'RETRY_IMPOSSIBLE', 'IDEMPOTENCY_KEY_EXPIRED'],
    description: "Why a retry was refused, or IDEMPOTENCY_KEY_EXPIRED: the key's workflow ended and has left the ledger",
  })
  error_type?: string;
}

export class AcceptedSchema implements Accepted {
  @ApiProperty()
  correlation_id!: string;

  @ApiProperty({ example: '/v1/workflows/01936f0e-…' })
  status_url!: string;
}

export class CancellingSchema implements Cancelling {
  @ApiProperty()
  correlation_id!: string;

  @ApiProperty({ enum: ['cancelling'] })
  status!: 'cancelling';
}

export class RetryStartedSchema implements Omit<RetryStarted, 'duplicate'> {
  @ApiProperty({ description: "The retry's own id" })
  correlation_id!: string;

  @ApiProperty()
  tenant_id!: string;

  @ApiProperty({ description: 'The workflow it retries' })
  retry_of!: string;

  @ApiProperty({ format: 'date-time' })
  deadline!: string;

  @ApiProperty()
  status_url!: string;
}

export class WorkflowStepSchema implements WorkflowStep {
  @ApiProperty({ description: "The step's key: the idempotency key of the envelope that completed it" })
  step!: string;

  @ApiProperty()
  agent!: string;

  @ApiProperty({ enum: MESSAGE_TYPES })
  message_type!: MessageType;

  @ApiProperty({ description: "The envelope's status: success, error or pending" })
  status!: string;

  @ApiProperty()
  message_id!: string;

  @ApiProperty({ type: String, nullable: true })
  causation_id!: string | null;

  @ApiProperty({ format: 'date-time' })
  started_at!: string;

  @ApiProperty({ format: 'date-time' })
  finished_at!: string;

  @ApiProperty()
  duration_ms!: number;

  @ApiProperty()
  attempt!: number;
}

export class WorkflowErrorSchema implements WorkflowError {
  @ApiProperty({ example: 'PROFILE_TIMEOUT' })
  error_type!: string;

  @ApiProperty()
  error_message!: string;

  @ApiProperty()
  retry_possible!: boolean;

  @ApiProperty({ description: 'The agent that failed' })
  agent!: string;

  @ApiProperty({ type: String, nullable: true, description: 'The message type it was handling' })
  step!: string | null;

  @ApiProperty({ format: 'date-time' })
  at!: string;

  @ApiPropertyOptional({ description: 'The envelope that reported it; absent for a timeout' })
  message_id?: string;
}

export class DegradationSchema implements Degradation {
  @ApiProperty({ description: 'The profile that did not answer' })
  profile!: string;

  @ApiProperty({ enum: DEGRADATION_REASONS })
  reason!: DegradationReason;

  @ApiProperty()
  detail!: string;
}

export class WorkflowViewSchema implements WorkflowView {
  @ApiProperty()
  correlation_id!: string;

  @ApiProperty()
  tenant_id!: string;

  @ApiProperty({ type: String, nullable: true, description: 'The query text, once the query envelope has been seen' })
  query!: string | null;

  @ApiProperty({ type: String, nullable: true })
  session_id!: string | null;

  @ApiProperty({ enum: WORKFLOW_STATUSES })
  status!: WorkflowStatus;

  @ApiProperty({ description: 'Completed without every lens it planned' })
  degraded!: boolean;

  @ApiProperty({ type: [DegradationSchema] })
  degradations!: Degradation[];

  @ApiProperty({ format: 'date-time' })
  started_at!: string;

  @ApiProperty({ format: 'date-time' })
  updated_at!: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  finished_at!: string | null;

  @ApiProperty({ format: 'date-time' })
  deadline!: string;

  @ApiProperty({ type: [String] })
  agents_involved!: string[];

  @ApiProperty({ type: [WorkflowStepSchema] })
  steps!: WorkflowStep[];

  @ApiProperty({ type: [String] })
  next_steps!: string[];

  @ApiProperty({ type: [WorkflowErrorSchema] })
  errors!: WorkflowError[];

  @ApiProperty({ description: 'Envelopes the hub received again and dropped' })
  duplicates_dropped!: number;

  @ApiProperty({ description: 'Envelopes that arrived after the workflow had finished; recorded, never applied' })
  late_envelopes!: number;

  @ApiProperty({
    type: 'object',
    nullable: true,
    additionalProperties: true,
    description: "Once completed: the responder's `response` payload (`answer`, `sources`, `results`, …; docs/envelope.schema.json)",
  })
  result!: ResponsePayload | null;

  @ApiProperty({ type: String, nullable: true, description: 'The workflow this one retries' })
  retry_of!: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'The workflow that retries this one' })
  retried_as!: string | null;
}

export class WorkflowSummarySchema implements WorkflowSummary {
  @ApiProperty()
  correlation_id!: string;

  @ApiProperty()
  tenant_id!: string;

  @ApiProperty({ type: String, nullable: true })
  query!: string | null;

  @ApiProperty({ enum: WORKFLOW_STATUSES })
  status!: WorkflowStatus;

  @ApiProperty()
  degraded!: boolean;

  @ApiProperty({ format: 'date-time' })
  started_at!: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  finished_at!: string | null;

  @ApiProperty({ type: [String] })
  agents_involved!: string[];

  @ApiProperty()
  duplicates_dropped!: number;
}

export class ListReplySchema implements ListReply {
  @ApiProperty({ type: [WorkflowSummarySchema] })
  workflows!: WorkflowSummary[];

  @ApiProperty({ type: String, nullable: true, description: 'Pass as `cursor` for the next page; null on the last' })
  next_cursor!: string | null;

  @ApiProperty({ description: "False when the list ran out at the end of the hub's recent index while older workflows exist (each still found by its id)" })
  complete!: boolean;
}

export class HistoryReplySchema implements HistoryReply {
  @ApiProperty()
  correlation_id!: string;

  @ApiProperty({ type: 'array', items: { type: 'object', additionalProperties: true }, description: "The workflow's envelopes in stream order, as published (docs/envelope.schema.json)" })
  envelopes!: unknown[];
}

/** A 504 of `?wait=true`: the error body, where to follow the workflow, and its state when last read. */
export class WaitTimedOutSchema extends ErrorBodySchema implements WaitTimedOutBody {
  @ApiProperty()
  correlation_id!: string;

  @ApiProperty()
  status_url!: string;

  @ApiProperty({ type: WorkflowViewSchema, nullable: true, description: 'Null when the hub did not answer' })
  workflow!: WorkflowView | null;
}
