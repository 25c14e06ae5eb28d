import type { FieldError } from './errors';

/**
 * Limits on JSON that Chorus reads from outside (envelopes, HTTP bodies), checked before any
 * validator walks it: class-transformer and class-validator recurse, so a value nested a few
 * thousand levels deep overflows the stack, and an own `constructor` key breaks their type lookup.
 * A number too large for a double (`1e999`) parses as Infinity, which JSON cannot carry on (it
 * serialises as null) and which the compiled schema's `integer` check lets through. Every walk here
 * stops at the depth limit, so it is safe on any input.
 */

/** Object keys that reach the prototype machinery of whatever code copies or inspects the value. */
export const RESERVED_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** Arrays and objects may nest this deep (an envelope needs six levels; the rest is headroom). */
export const MAX_JSON_DEPTH = 64;

/** A rejection lists at most this many fields, then says how many more there were. */
export const MAX_FIELD_ERRORS = 50;
const MAX_MESSAGES_PER_FIELD = 10;
const MAX_FIELD_CHARS = 200;
const MAX_MESSAGE_CHARS = 500;

/**
 * True when no array or object nests deeper than `maxDepth`, no object has an own reserved key and
 * every number is finite.
 */
export function isWithinJsonLimits(value: unknown, maxDepth = MAX_JSON_DEPTH): boolean {
  const within = (v: unknown, depth: number): boolean => {
    if (typeof v === 'number') return Number.isFinite(v);
    if (typeof v !== 'object' || v === null) return true;
    if (depth > maxDepth) return false;
    if (Array.isArray(v)) {
      for (const item of v) if (!within(item, depth + 1)) return false;
      return true;
    }
    for (const key of Object.keys(v)) {
      if (RESERVED_KEYS.has(key) || !within((v as Record<string, unknown>)[key], depth + 1)) return false;
    }
    return true;
  };
  return within(value, 1);
}

/**
 * A copy of `value` a validator can walk: reserved keys left out, and arrays or objects nested
 * deeper than `maxDepth`, and numbers that are not finite, replaced by null. Each such place is
 * reported as a field error, so the rejection names it, and the rest of the value can still be
 * checked (and its errors reported).
 */
export function sanitizeJson(value: unknown, maxDepth = MAX_JSON_DEPTH): { value: unknown; errors: FieldError[] } {
  const errors: FieldError[] = [];
  // The path is built only for an error: a parent link per level costs nothing per value.
  const field = (at: Step | null) => {
    const keys: string[] = [];
    for (let s = at; s; s = s.parent) keys.push(s.key);
    return keys.length > 0 ? keys.reverse().join('.') : '$';
  };
  const copy = (v: unknown, depth: number, at: Step | null): unknown => {
    if (typeof v === 'number' && !Number.isFinite(v)) {
      errors.push({ field: field(at), messages: [`${field(at)} must be a finite number (it is ${String(v)})`] });
      return null;
    }
    if (typeof v !== 'object' || v === null) return v;
    if (depth > maxDepth) {
      errors.push({ field: field(at), messages: [`${field(at)} nests more than ${maxDepth} levels of arrays and objects`] });
      return null;
    }
    if (Array.isArray(v)) return v.map((item, i) => copy(item, depth + 1, { key: String(i), parent: at }));
    const entries: Array<[string, unknown]> = [];
    for (const key of Object.keys(v)) {
      const step = { key, parent: at };
      if (RESERVED_KEYS.has(key)) {
        errors.push({ field: field(step), messages: [`property ${key} should not exist (reserved key)`] });
        continue;
      }
      entries.push([key, copy((v as Record<string, unknown>)[key], depth + 1, step)]);
    }
    return Object.fromEntries(entries);
  };
  return { value: copy(value, 1, null), errors };
}

interface Step {
  key: string;
  parent: Step | null;
}

/**
 * A copy of `value` whose arrays keep at most `maxItems + 1` items (so an ArrayMaxSize rule up to
 * `maxItems` still fails), and whether any array was cut.
 */
export function clipArrays(value: unknown, maxItems: number): { value: unknown; clipped: boolean } {
  let clipped = false;
  const copy = (v: unknown): unknown => {
    if (typeof v !== 'object' || v === null) return v;
    if (Array.isArray(v)) {
      if (v.length > maxItems + 1) clipped = true;
      return v.slice(0, maxItems + 1).map(copy);
    }
    return Object.fromEntries(Object.entries(v).map(([k, item]) => [k, copy(item)]));
  };
  return { value: copy(value), clipped };
}

/**
 * At most `max` field errors, each with bounded text (a field's name can be a client's key of any
 * length), and one more entry saying how many were left out: a rejection stays small enough to
 * log, answer and dead-letter whatever it rejects.
 */
export function boundFieldErrors(errors: readonly FieldError[], max = MAX_FIELD_ERRORS): FieldError[] {
  const kept = errors.slice(0, max).map((e) => ({
    field: clip(e.field, MAX_FIELD_CHARS),
    messages: e.messages.slice(0, MAX_MESSAGES_PER_FIELD).map((m) => clip(m, MAX_MESSAGE_CHARS)),
  }));
  if (errors.length > max) kept.push({ field: '$', messages: [`${errors.length - max} more invalid fields not listed`] });
  return kept;
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
