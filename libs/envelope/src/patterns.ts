/** Token rules shared by the envelope validator, the HTTP DTOs and the subject builders. */
/** A UUID of version 7 (time-ordered), as every message id is. */
export const UUID_V7_PATTERN = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-7[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$/;
export const CORRELATION_ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;
export const TENANT_ID_PATTERN = /^[a-z0-9][a-z0-9_-]{0,62}$/;
export const AGENT_NAME_PATTERN = /^[a-z][a-z0-9_-]{0,62}$/;
export const PROFILE_NAME_PATTERN = /^[a-z][a-z0-9_-]{0,31}$/;
export const SESSION_ID_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
/** A client's idempotency key (HTTP `Idempotency-Key`, CLI `--idempotency-key`): printable ASCII, no spaces. */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,256}$/;
export const IDEMPOTENCY_KEY_RULE = 'must be 1 to 256 printable ASCII characters, no spaces';
/** W3C trace-context `traceparent`, version 00. */
export const TRACEPARENT_PATTERN = /^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

export const DEFAULT_TENANT = 'default';
export const SCHEMA_VERSION = 1;
/** Limits on a query, enforced at the edge and again on the bus. */
export const MAX_QUERY_CHARS = 4000;

/**
 * Whether `text` has from `min` to `max` characters, counted as the edge and the envelope's schema
 * count them: by code point, so an emoji (two UTF-16 units) is one. (`.length` counts units: a query
 * of 2,001 emoji passed the edge and was then refused by every profile.)
 */
export function hasCharsBetween(text: string, min: number, max: number): boolean {
  // A string has at most as many code points as UTF-16 units, and at least half as many.
  if (text.length < min || text.length > 2 * max) return false;
  if (text.length <= max && min <= 1) return true;
  let chars = 0;
  for (const _ of text) if (++chars > max) return false;
  return chars >= min;
}
/**
 * What a query must hold: a character that is neither white space nor an invisible one: soft hyphen,
 * combining grapheme joiner, Arabic letter mark, Hangul fillers, Khmer inherent vowels, Mongolian
 * variation selectors and vowel separator, zero-width space and joiners, direction marks, embeddings,
 * overrides and isolates, word joiner and invisible operators, variation selectors, BOM, and the C0
 * and C1 control characters (NUL, ESC, DEL, …). A query of those alone was accepted and searched as
 * nothing. (Characters beyond the BMP, such as tag
 * characters, are not listed: a JSON Schema pattern without the `u` flag cannot name them.)
 */
export const VISIBLE_CHARACTER_PATTERN = /[^\s\u0000-\u001f\u007f-\u009f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0]/;
export const VISIBLE_CHARACTER_RULE = 'query must contain a character other than spaces, control characters and invisible ones';
export const MAX_TOP_K = 100;
/** The largest `rank_window` (results fused per profile, and so the most a profile is asked for). */
export const MAX_RANK_WINDOW = 10_000;
/** The longest document id a result may carry. */
export const MAX_DOCUMENT_ID_CHARS = 512;
/** The longest title a search result carries. */
export const MAX_DOCUMENT_TITLE_CHARS = 1000;
/** Profiles a plan may name (and its alternatives); a result fuses at most these. */
export const MAX_PLANNED_PROFILES = 16;
/** The most signals a classification carries (the rules that fired, typos, directives). */
export const MAX_CLASSIFICATION_SIGNALS = 64;
/** The longest span of the query a classification names as an entity. */
export const MAX_ENTITY_CHARS = 512;
/** A degradation per planned profile for its search, and one more for its documents. */
export const MAX_DEGRADATIONS = 2 * MAX_PLANNED_PROFILES;
