import { createHash, createHmac } from 'node:crypto';
import { IDEMPOTENCY_KEY_PATTERN, IDEMPOTENCY_KEY_RULE, SESSION_ID_PATTERN } from './patterns';
import { newUuidV7 } from './random-ids';

/** How the edge mints a correlation id for a new workflow. */
export type CorrelationStrategy = 'uuidv7' | 'session';

/** The fields of a query request that decide whether two submissions are the same one. */
export interface QueryRequestFields {
  query: string;
  session_id?: string | null;
  profiles?: readonly string[] | null;
  top_k?: number;
  require_all?: boolean;
}

/** What makes two submissions the same one in the session strategy. */
export interface CorrelationIdInput extends QueryRequestFields {
  tenant_id: string;
}

/**
 * A query request as two submissions are compared, by the session strategy and by the check of a
 * reused idempotency key alike: the query trimmed (" q" and "q" search the same), the profiles as
 * a set (empty or left out both let the planner choose), `require_all` false when left out.
 */
function sameRequestForm(r: QueryRequestFields) {
  return {
    query: r.query.trim(),
    session_id: r.session_id ?? null,
    profiles: r.profiles && r.profiles.length > 0 ? [...new Set(r.profiles)].sort() : null,
    top_k: r.top_k ?? null,
    require_all: r.require_all ?? false,
  };
}

/**
 * The fields in which two query requests differ, in the form the session strategy compares them.
 * `top_k` is compared only when `compareTopK` (a request that leaves it out takes the default of
 * whichever process receives it, so a retry sent to another replica must not be refused for it).
 */
export function queryRequestDifferences(a: QueryRequestFields, b: QueryRequestFields, options: { compareTopK: boolean }): string[] {
  const x = sameRequestForm(a);
  const y = sameRequestForm(b);
  return [
    x.query !== y.query && 'query',
    x.session_id !== y.session_id && 'session_id',
    JSON.stringify(x.profiles) !== JSON.stringify(y.profiles) && 'profiles',
    options.compareTopK && x.top_k !== y.top_k && 'top_k',
    x.require_all !== y.require_all && 'require_all',
  ].filter((f): f is string => typeof f === 'string');
}

export interface CorrelationIdOptions {
  strategy: CorrelationStrategy;
  /**
   * Key of the HMAC over the query text in the session strategy. The query hash in a correlation id
   * is keyed, so an id does not reveal a hash of the user's text that anyone could recompute.
   * Every replica of the edge that should collapse the same submissions needs the same secret.
   */
  secret: string;
  /** Clock, for tests. */
  now?: () => number;
}

export function newMessageId(): string {
  return newUuidV7();
}

/**
 * Mints a correlation id. `uuidv7` (the default) is unique per submission. `session` is
 * `{session_id}_{query_hash8}_{unix_seconds}`: identical submissions of one session within the same
 * second get the same id, so they collapse into one workflow. Without a session id it falls back
 * to uuidv7.
 *
 * Identical means the whole request, not the text alone: the hash covers the tenant (the stream
 * drops a second publish of one id whatever its tenant, so another tenant's submission would be
 * lost), the query (trimmed), the profiles as a set, `top_k` and `require_all`. A request that
 * differs in any of them is another workflow, not the first one's answer under a 202.
 */
export function createCorrelationId(input: CorrelationIdInput, options: CorrelationIdOptions): string {
  if (options.strategy === 'uuidv7' || !input.session_id) return newUuidV7();
  if (!SESSION_ID_PATTERN.test(input.session_id)) {
    throw new RangeError(`session_id must match ${SESSION_ID_PATTERN.source}`);
  }
  const seconds = Math.floor((options.now ?? Date.now)() / 1000);
  const r = sameRequestForm(input);
  const request = JSON.stringify([input.tenant_id, r.query, r.profiles, r.top_k, r.require_all]);
  const hash8 = createHmac('sha256', options.secret).update(request).digest('hex').slice(0, 8);
  return `${input.session_id}_${hash8}_${seconds}`;
}

/**
 * The correlation id of a submission made with an idempotency key (HTTP `Idempotency-Key`, CLI
 * `--idempotency-key`): the same key of the same tenant always names the same workflow, whichever
 * edge receives it. The key is the caller's own token, so hashing it unkeyed reveals nothing.
 */
export function correlationIdForIdempotencyKey(tenantId: string, key: string): string {
  if (!IDEMPOTENCY_KEY_PATTERN.test(key)) throw new RangeError(`an idempotency key ${IDEMPOTENCY_KEY_RULE}`);
  return `ik_${createHash('sha256').update(`${tenantId}\0${key}`).digest('hex').slice(0, 32)}`;
}

/**
 * The correlation id of the retry of a workflow (an `orchestration_command` `{command: "retry"}`):
 * `rt_` and 32 hex digits of SHA-256 over the tenant, a NUL byte and the retried workflow's id. So a
 * workflow has at most one retry, whoever asks for it and however often (the hub, the ingress and
 * the CLI all compute it); retrying again means retrying the retry.
 */
export function correlationIdForRetry(tenantId: string, correlationId: string): string {
  return `rt_${createHash('sha256').update(`${tenantId}\0${correlationId}`).digest('hex').slice(0, 32)}`;
}
