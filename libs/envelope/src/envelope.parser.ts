import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';
import { Envelope } from './envelope';
import { InvalidEnvelopeError, type FieldError } from './errors';
import { isMessageType } from './message-type';
import { PAYLOAD_CLASSES } from './payloads';
import { parseWorkflowSubject } from './subjects';
import { createEnvelopeValidator } from './envelope.validator';
import { boundFieldErrors, clipArrays, isWithinJsonLimits, sanitizeJson } from './json-limits';

/**
 * A rejection explains the first items of each array (class-validator takes about a millisecond
 * per item under load); the schema's item limits, up to the contract's largest (1000
 * tool_results.results), are checked on a copy clipped just past that.
 */
const MAX_EXPLAINED_ITEMS = 100;
const MAX_ARRAY_ITEMS = 1000;

export type ParseResult<T> = { ok: true; value: T } | { ok: false; error: InvalidEnvelopeError };

export interface ParseEnvelopeOptions {
  /** The subject it arrived on: its tenant, message type and correlation id must match the body. */
  subject?: string;
}

const decoder = new TextDecoder('utf-8', { fatal: true });
/** Compiled once: a pure function of the schema, like a regular expression. */
const validator = createEnvelopeValidator();

/**
 * The only door from bytes (or an already-decoded JSON value) to a typed envelope. Checks the
 * envelope, the payload for its message type and, when given, the subject; reports every invalid
 * field at once.
 */
export function parseEnvelope(input: unknown, options: ParseEnvelopeOptions = {}): ParseResult<Envelope> {
  let value: unknown = input;
  if (input instanceof Uint8Array || typeof input === 'string') {
    try {
      value = JSON.parse(typeof input === 'string' ? input : decoder.decode(input));
    } catch (e) {
      return invalid([{ field: '$', messages: [`body is not valid UTF-8 JSON: ${(e as Error).message}`] }]);
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return invalid([{ field: '$', messages: ['envelope must be a JSON object'] }]);
  }
  if (isWithinJsonLimits(value) && validator.isValid(value)) {
    const subjectErrors = options.subject === undefined ? [] : checkSubject(value as Record<string, unknown>, options.subject);
    if (subjectErrors.length === 0) return { ok: true, value: value as Envelope };
  }
  const errors = explainSafely(value as Record<string, unknown>, options);
  // Arrays clipped for the explanation can hide an error past their first items; the schema still finds it.
  if (errors.length === 0) errors.push(...validator.errors(sanitizeJson(value).value));
  return invalid(boundFieldErrors(errors.length > 0 ? errors : [{ field: '$', messages: ['envelope is invalid'] }]));
}

/**
 * The class-validator verdict, field by field: the canonical rules and their messages. Used to
 * explain a rejection, and by the tests that hold the compiled schema to the same verdicts.
 */
export function explainEnvelope(input: unknown, options: ParseEnvelopeOptions = {}): FieldError[] {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return [{ field: '$', messages: ['envelope must be a JSON object'] }];
  return explainSafely(input as Record<string, unknown>, options);
}

/**
 * Explains a rejection without ever throwing: what breaks the validators (deep nesting, reserved
 * keys, non-finite numbers) is reported and left out of what they see, thousands of array items
 * are not explained one by one (see MAX_EXPLAINED_ITEMS), and should class-validator still throw,
 * the compiled schema's errors stand in for its messages.
 */
function explainSafely(raw: Record<string, unknown>, options: ParseEnvelopeOptions): FieldError[] {
  const hazards = isWithinJsonLimits(raw) ? null : sanitizeJson(raw);
  const checked = (hazards?.value ?? raw) as Record<string, unknown>;
  let errors: FieldError[];
  try {
    const explained = clipArrays(checked, MAX_EXPLAINED_ITEMS);
    errors = explain(explained.value as Record<string, unknown>, options);
    if (explained.clipped) {
      const named = new Set(errors.map((e) => e.field));
      const tooMany = validator.errors(clipArrays(checked, MAX_ARRAY_ITEMS).value, ['maxItems']).filter((e) => !named.has(e.field));
      errors.push(...tooMany);
    }
  } catch {
    errors = [...validator.errors(checked), ...(options.subject === undefined ? [] : checkSubject(checked, options.subject))];
  }
  if (!hazards) return errors;
  // A hazard left a null in its place: what the validators say of that null adds nothing.
  const named = new Set(hazards.errors.map((e) => e.field));
  return [...hazards.errors, ...errors.filter((e) => !named.has(e.field))];
}

function explain(raw: Record<string, unknown>, options: ParseEnvelopeOptions): FieldError[] {
  const envelope = plainToInstance(Envelope, raw);
  const errors = flattenValidationErrors(validateSync(envelope));
  if (isMessageType(raw.message_type) && isPlainObject(raw.payload)) {
    const payload = plainToInstance(PAYLOAD_CLASSES[raw.message_type] as new () => object, raw.payload);
    errors.push(...flattenValidationErrors(validateSync(payload), 'payload'));
  }
  if (options.subject !== undefined) errors.push(...checkSubject(raw, options.subject));
  return errors;
}

function checkSubject(raw: Record<string, unknown>, subject: string): FieldError[] {
  const parts = parseWorkflowSubject(subject);
  if (!parts) return [{ field: '$subject', messages: [`${subject} is not a valid workflow subject`] }];
  const errors: FieldError[] = [];
  const expect = (field: string, token: string) => {
    if (raw[field] !== token) errors.push({ field, messages: [`${field} does not match the subject token "${token}"`] });
  };
  expect('tenant_id', parts.tenantId);
  expect('message_type', parts.messageType);
  expect('correlation_id', parts.correlationId);
  return errors;
}

/** Turns class-validator's error tree into one entry per invalid field, with dotted paths. */
export function flattenValidationErrors(errors: ValidationError[], prefix = ''): FieldError[] {
  const out: FieldError[] = [];
  const walk = (list: ValidationError[], path: string) => {
    for (const error of list) {
      const field = path ? `${path}.${error.property}` : error.property;
      // A missing field breaks every rule on it; "is required" says it once and plainly.
      if (error.constraints) {
        out.push({ field, messages: error.value === undefined ? [`${field} is required`] : messagesOf(error.value, error.constraints) });
      }
      if (error.children?.length) walk(error.children, field);
    }
  };
  walk(errors, prefix);
  return out;
}

/** class-validator's type checks, and whether a value has the JavaScript type each one asks for. */
const TYPE_CHECKS: Record<string, (value: unknown) => boolean> = {
  isString: (v) => typeof v === 'string',
  isInt: (v) => typeof v === 'number',
  isNumber: (v) => typeof v === 'number',
  isBoolean: (v) => typeof v === 'boolean',
  isArray: (v) => Array.isArray(v),
  isObject: (v) => typeof v === 'object' && v !== null && !Array.isArray(v),
};

/**
 * A field's messages, each once. A value of the wrong JavaScript type gets only its type message:
 * `"top_k": "5"` is "top_k must be an integer number", not also "must not be less than 1" and
 * "greater than 100", which no string could meet. A value of the right type (`2.5` for an integer,
 * `""` for a string) hears every rule it breaks, and so do an array's elements (`each` rules, whose
 * messages start "each value in").
 */
function messagesOf(value: unknown, constraints: Record<string, string>): string[] {
  const wrongType = Object.entries(constraints)
    .filter(([name, message]) => TYPE_CHECKS[name] !== undefined && !TYPE_CHECKS[name](value) && !message.startsWith('each value in'))
    .map(([, message]) => message);
  return [...new Set(wrongType.length > 0 ? wrongType : Object.values(constraints))];
}

function invalid(errors: FieldError[]): ParseResult<Envelope> {
  return { ok: false, error: new InvalidEnvelopeError(errors) };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
