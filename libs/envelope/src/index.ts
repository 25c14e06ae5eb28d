export { MAX_CHARS, MaxChars } from './max-chars.validator';
// class-transformer's @Type() and class-validator read design-time metadata.
import 'reflect-metadata';
export { Envelope, type EnvelopeOf } from './envelope';
export { ErrorDetails } from './error-details';
export {
  BadRequestError,
  ChorusError,
  EnvelopeErrorCodes,
  badField,
  InvalidEnvelopeError,
  StepFailedError,
  fromErrorDetails,
  toErrorDetails,
  type ErrorDetailsShape,
  type FieldError,
} from './errors';
export {
  ENVELOPE_STATUSES,
  MESSAGE_TYPES,
  MessageTypes,
  QUERY_NEXT_STEPS,
  TERMINAL_STATUSES,
  WORKFLOW_STATUSES,
  isMessageType,
  isTerminalStatus,
  type EnvelopeStatus,
  type MessageType,
  type WorkflowStatus,
} from './message-type';
export {
  AGENT_NAME_PATTERN,
  CORRELATION_ID_PATTERN,
  DEFAULT_TENANT,
  IDEMPOTENCY_KEY_PATTERN,
  IDEMPOTENCY_KEY_RULE,
  MAX_CLASSIFICATION_SIGNALS,
  MAX_DOCUMENT_ID_CHARS,
  MAX_ENTITY_CHARS,
  MAX_DOCUMENT_TITLE_CHARS,
  MAX_QUERY_CHARS,
  hasCharsBetween,
  MAX_RANK_WINDOW,
  MAX_TOP_K,
  PROFILE_NAME_PATTERN,
  SCHEMA_VERSION,
  SESSION_ID_PATTERN,
  TENANT_ID_PATTERN,
  TRACEPARENT_PATTERN,
  UUID_V7_PATTERN,
  VISIBLE_CHARACTER_PATTERN,
  VISIBLE_CHARACTER_RULE,
} from './patterns';
export { PAYLOAD_CLASSES, type PayloadOf } from './payloads';
export { QueryPayload } from './payloads/query.payload';
export {
  ClassificationResultPayload,
  COMPLEXITIES,
  ENTITY_KINDS,
  Entity,
  INTENTS,
  MODALITIES,
  type Complexity,
  type EntityKind,
  type Intent,
  type Modality,
} from './payloads/classification-result.payload';
export {
  ExecutionPlanPayload,
  FusionParameters,
  PlannedProfile,
  ROUTES,
  type Route,
} from './payloads/execution-plan.payload';
export {
  DEGRADATION_REASONS,
  Degradation,
  FusedResult,
  ToolResultsPayload,
  type DegradationReason,
} from './payloads/tool-results.payload';
export { AnswerSource, Provenance, RankedResult, ResponsePayload } from './payloads/response.payload';
export { StatusUpdatePayload } from './payloads/status-update.payload';
export { COMMANDS, OrchestrationCommandPayload, type Command } from './payloads/orchestration-command.payload';
export { IsDateTime, isDateTime, isTimeFilter, TIME_FILTER_RULE } from './date-time.validator';
export { IsFusionWeights, MAX_FUSION_WEIGHT, isFusionWeights } from './fusion-weights.validator';
export { MAX_FIELD_ERRORS, MAX_JSON_DEPTH, RESERVED_KEYS, boundFieldErrors, isWithinJsonLimits, sanitizeJson } from './json-limits';
export { createEnvelope, deriveEnvelope, type CreateEnvelopeInput, type DeriveEnvelopeInput } from './envelope.factory';
export { explainEnvelope, flattenValidationErrors, parseEnvelope, type ParseEnvelopeOptions, type ParseResult } from './envelope.parser';
export { createEnvelopeValidator, type EnvelopeValidator } from './envelope.validator';
export { ENVELOPE_SCHEMA_ID, createEnvelopeJsonSchema } from './envelope.schema';
export { idempotencyKey } from './idempotency';
export {
  correlationIdForIdempotencyKey,
  correlationIdForRetry,
  createCorrelationId,
  queryRequestDifferences,
  newMessageId,
  type CorrelationIdInput,
  type QueryRequestFields,
  type CorrelationIdOptions,
  type CorrelationStrategy,
} from './correlation-id';
export {
  ALL_DEAD_LETTER_SUBJECTS,
  ALL_DUPLICATE_SUBJECTS,
  ALL_WORKFLOW_SUBJECTS,
  DUPLICATE_PREFIX,
  duplicateNoticeProblem,
  duplicateNoticeSubject,
  DEAD_LETTER_PREFIX,
  HubSubjects,
  INVALID_TOKEN,
  PROFILE_SUBJECT_PREFIX,
  WORKFLOW_PREFIX,
  deadLetterSubject,
  parseWorkflowSubject,
  profileSubject,
  workflowFilter,
  workflowSubject,
  type WorkflowSubjectParts,
} from './subjects';
export { createTraceparent, parseTraceparent, toTraceparent, type TraceContext } from './trace-context';
export type {
  ProfileDocument,
  ProfileDocumentsReply,
  ProfileDocumentsRequest,
  ProfileHit,
  ProfileSearchReply,
  ProfileSearchRequest,
} from './profile-protocol';
export { parseDocumentsRequest, parseSearchRequest } from './profile-request';
export type {
  DuplicateNotice,
  HistoryReply,
  ListReply,
  ListRequest,
  WorkflowError,
  WorkflowRequest,
  WorkflowStep,
  WorkflowSummary,
  WorkflowView,
} from './workflow-view';
export { retryBudgetMs, retryRefusal } from './workflow-view';
