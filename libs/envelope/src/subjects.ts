import { isMessageType, type MessageType } from './message-type';
import { CORRELATION_ID_PATTERN, PROFILE_NAME_PATTERN, TENANT_ID_PATTERN } from './patterns';

/**
 * Every NATS subject Chorus uses is built here; no call site spells one.
 *
 * - workflow envelopes: `chorus.wf.<tenant>.<message_type>.<correlation_id>` (one JetStream stream)
 * - dead letters: `chorus.dlq.<tenant>.<message_type>`
 * - dropped duplicates: `chorus.dup.<tenant>.<message_type>.<correlation_id>`
 * - profile services: `chorus.profile.<profile>.<endpoint>`
 * - hub queries (request/reply): `chorus.hub.<query>`
 */
export const WORKFLOW_PREFIX = 'chorus.wf';
export const DEAD_LETTER_PREFIX = 'chorus.dlq';
export const ALL_WORKFLOW_SUBJECTS = `${WORKFLOW_PREFIX}.>`;
export const ALL_DEAD_LETTER_SUBJECTS = `${DEAD_LETTER_PREFIX}.>`;
export const DUPLICATE_PREFIX = 'chorus.dup';
export const ALL_DUPLICATE_SUBJECTS = `${DUPLICATE_PREFIX}.>`;

/** Subject tokens that are not valid are replaced by this in dead-letter subjects. */
export const INVALID_TOKEN = '_invalid';

export function workflowSubject(tenantId: string, messageType: MessageType, correlationId: string): string {
  assertToken('tenant_id', tenantId, TENANT_ID_PATTERN);
  assertToken('correlation_id', correlationId, CORRELATION_ID_PATTERN);
  return `${WORKFLOW_PREFIX}.${tenantId}.${messageType}.${correlationId}`;
}

/** A subscription filter over workflow subjects; an omitted part matches any token. */
export function workflowFilter(parts: { tenantId?: string; messageType?: MessageType; correlationId?: string }): string {
  if (parts.tenantId) assertToken('tenant_id', parts.tenantId, TENANT_ID_PATTERN);
  if (parts.correlationId) assertToken('correlation_id', parts.correlationId, CORRELATION_ID_PATTERN);
  return `${WORKFLOW_PREFIX}.${parts.tenantId ?? '*'}.${parts.messageType ?? '*'}.${parts.correlationId ?? '*'}`;
}

export interface WorkflowSubjectParts {
  tenantId: string;
  messageType: MessageType;
  correlationId: string;
}

/** The parts of a workflow subject, or null when it is not one (or a token is invalid). */
export function parseWorkflowSubject(subject: string): WorkflowSubjectParts | null {
  const tokens = subject.split('.');
  if (tokens.length !== 5 || `${tokens[0]}.${tokens[1]}` !== WORKFLOW_PREFIX) return null;
  const [, , tenantId, messageType, correlationId] = tokens;
  if (!TENANT_ID_PATTERN.test(tenantId) || !isMessageType(messageType) || !CORRELATION_ID_PATTERN.test(correlationId)) {
    return null;
  }
  return { tenantId, messageType, correlationId };
}

/**
 * The dead-letter subject for a message that arrived on `sourceSubject`. Tokens are taken from
 * the source subject (the body is not trusted) and replaced by `_invalid` when not valid.
 */
export function deadLetterSubject(sourceSubject: string): string {
  const tokens = sourceSubject.split('.');
  const tenant = tokens[2] && TENANT_ID_PATTERN.test(tokens[2]) ? tokens[2] : INVALID_TOKEN;
  const type = tokens[3] && isMessageType(tokens[3]) ? tokens[3] : INVALID_TOKEN;
  return `${DEAD_LETTER_PREFIX}.${tenant}.${type}`;
}

/**
 * Where a publisher reports a re-publish the workflow stream dropped inside its duplicate window
 * (`chorus.dup.<tenant>.<message_type>.<correlation_id>`), so the hub can count it.
 */
export function duplicateNoticeSubject(tenantId: string, messageType: MessageType, correlationId: string): string {
  return `${DUPLICATE_PREFIX}.${tenantId}.${messageType}.${correlationId}`;
}

/**
 * Why a duplicate notice cannot be counted, or null: its workflow fields missing or malformed, or
 * another workflow than its subject names (`chorus.dup.globex…` saying `tenant_id: acme`). A
 * publisher may publish only under the subject; its body is the publisher's word.
 */
export function duplicateNoticeProblem(notice: unknown, subject: string): string | null {
  const n = (typeof notice === 'object' && notice !== null ? notice : {}) as Record<string, unknown>;
  const { tenant_id: tenant, message_type: type, correlation_id: id } = n;
  if (typeof tenant !== 'string' || !TENANT_ID_PATTERN.test(tenant)) return 'tenant_id is missing or not a tenant id';
  if (typeof type !== 'string' || !isMessageType(type)) return 'message_type is missing or not a message type';
  if (typeof id !== 'string' || !CORRELATION_ID_PATTERN.test(id)) return 'correlation_id is missing or not a correlation id';
  const named = duplicateNoticeSubject(tenant, type, id);
  return named === subject ? null : `it is about ${named}, but was published on ${subject}`;
}

export const PROFILE_SUBJECT_PREFIX = 'chorus.profile';

/** The subject of one endpoint (`search`, `documents`) of a profile service. */
export function profileSubject(profile: string, endpoint: 'search' | 'documents'): string {
  assertToken('profile', profile, PROFILE_NAME_PATTERN);
  return `${PROFILE_SUBJECT_PREFIX}.${profile}.${endpoint}`;
}

/** Request/reply subjects the hub answers, in a queue group shared by its replicas. */
export const HubSubjects = Object.freeze({
  Workflow: 'chorus.hub.workflow',
  History: 'chorus.hub.history',
  List: 'chorus.hub.list',
  Stats: 'chorus.hub.stats',
} as const);

function assertToken(name: string, value: string, pattern: RegExp): void {
  if (!pattern.test(value)) throw new RangeError(`${name} is not a valid subject token: ${JSON.stringify(value)}`);
}
