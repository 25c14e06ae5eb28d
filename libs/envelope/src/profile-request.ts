import { BadRequestError, badField, type FieldError } from './errors';
import { CORRELATION_ID_PATTERN, MAX_DOCUMENT_ID_CHARS, MAX_QUERY_CHARS, MAX_RANK_WINDOW, MAX_TOP_K, hasCharsBetween } from './patterns';
import type { ProfileDocumentsRequest, ProfileSearchRequest } from './profile-protocol';

/**
 * The body of a profile's `search` request, checked where the profile service receives it (libs/bus
 * profile.service); every invalid field is named, none is defaulted. `limit` is at most the largest
 * rank window, which the search worker sends as it. The
 * text searched is a query with its directives removed, so no longer than a query. Fields it does
 * not know are let through (here and in `documents`): a newer search worker may send one.
 */
export function parseSearchRequest(raw: unknown): ProfileSearchRequest {
  const r = asObject(raw);
  const problems: FieldError[] = [];
  if (!isText(r.text, 1)) problems.push(badField('text', `text must be a non-empty string of at most ${MAX_QUERY_CHARS} characters`));
  if (!isIntegerIn(r.limit, 1, MAX_RANK_WINDOW)) problems.push(badField('limit', `limit must be an integer from 1 to ${MAX_RANK_WINDOW}`));
  if (r.correlation_id !== undefined && !(typeof r.correlation_id === 'string' && CORRELATION_ID_PATTERN.test(r.correlation_id))) {
    problems.push(badField('correlation_id', 'correlation_id must match [A-Za-z0-9_-]{1,128}'));
  }
  if (problems.length > 0) throw new BadRequestError(problems);
  const { text, limit, correlation_id } = r as unknown as ProfileSearchRequest;
  return { text, limit, correlation_id };
}

/**
 * The body of a `documents` request, checked; every invalid field is named. Documents are fetched
 * for fused results, so at most a query's `top_k` of them.
 */
export function parseDocumentsRequest(raw: unknown): ProfileDocumentsRequest {
  const r = asObject(raw);
  const problems: FieldError[] = [];
  if (!Array.isArray(r.ids) || r.ids.length > MAX_TOP_K) {
    problems.push(badField('ids', `ids must be an array of at most ${MAX_TOP_K} document ids`));
  } else if (!r.ids.every((id) => typeof id === 'string' && id.length > 0 && id.length <= MAX_DOCUMENT_ID_CHARS)) {
    problems.push(badField('ids', `ids must be non-empty strings of at most ${MAX_DOCUMENT_ID_CHARS} characters`));
  }
  if (r.query !== undefined && !isText(r.query, 0)) problems.push(badField('query', `query must be a string of at most ${MAX_QUERY_CHARS} characters`));
  if (r.lead !== undefined && !isIntegerIn(r.lead, 0, Number.MAX_SAFE_INTEGER)) problems.push(badField('lead', 'lead must be an integer of 0 or more'));
  for (const field of ['max_chars', 'lead_max_chars']) {
    if (r[field] !== undefined && !isIntegerIn(r[field], 1, Number.MAX_SAFE_INTEGER)) problems.push(badField(field, `${field} must be an integer of 1 or more`));
  }
  if (problems.length > 0) throw new BadRequestError(problems);
  const { ids, query, lead, max_chars, lead_max_chars } = r as unknown as ProfileDocumentsRequest;
  return { ids, query, lead, max_chars, lead_max_chars };
}

function asObject(raw: unknown): Record<string, unknown> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new BadRequestError([badField('$', 'the request must be a JSON object')]);
  return raw as Record<string, unknown>;
}

function isText(value: unknown, minChars: number): boolean {
  return typeof value === 'string' && hasCharsBetween(value, minChars, MAX_QUERY_CHARS);
}

function isIntegerIn(value: unknown, min: number, max: number): boolean {
  return Number.isSafeInteger(value) && (value as number) >= min && (value as number) <= max;
}
