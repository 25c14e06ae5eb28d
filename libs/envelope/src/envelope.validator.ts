import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FieldError } from './errors';
import { createEnvelopeJsonSchema } from './envelope.schema';

/**
 * The envelope's JSON Schema (generated from the class-validator rules) compiled with ajv: about
 * twenty times faster than class-validator on the valid envelopes every consumer checks. The
 * class-validator rules stay the source of truth and give the messages of a rejection; a property
 * test holds the two to the same verdicts.
 */
export interface EnvelopeValidator {
  /** True when the value is a valid envelope (its payload included). */
  isValid(value: unknown): boolean;
  /**
   * Every problem ajv finds, as field errors (for the rare case class-validator has none to give);
   * with `keywords`, only the problems of those JSON Schema keywords (`maxItems`, say).
   */
  errors(value: unknown, keywords?: readonly string[]): FieldError[];
}

export function createEnvelopeValidator(): EnvelopeValidator {
  const schema = createEnvelopeJsonSchema();
  const fast = compile(schema, false);
  // Compiling costs a few hundred milliseconds of start-up; the thorough one is for rare rejections.
  let thorough: ValidateFunction | undefined;
  return {
    isValid: (value) => fast(value) as boolean,
    errors: (value, keywords) => {
      thorough ??= compile(schema, true);
      if (thorough(value)) return [];
      const errors = thorough.errors ?? [];
      return toFieldErrors(keywords ? errors.filter((e) => keywords.includes(e.keyword)) : errors);
    },
  };
}

function compile(schema: Record<string, unknown>, allErrors: boolean): ValidateFunction {
  // validateSchema: the schema is generated, and a test checks it against draft-07.
  const ajv = new Ajv({ allErrors, strict: false, validateFormats: true, validateSchema: false });
  addFormats(ajv, ['date-time', 'uuid']);
  return ajv.compile(schema);
}

function toFieldErrors(errors: ErrorObject[]): FieldError[] {
  const byField = new Map<string, string[]>();
  for (const e of errors) {
    if (e.keyword === 'if' || e.keyword === 'anyOf') continue;
    const path = e.instancePath.split('/').filter(Boolean).join('.');
    const field = e.keyword === 'required' ? [path, (e.params as { missingProperty: string }).missingProperty].filter(Boolean).join('.') : path || '$';
    const message = e.keyword === 'required' ? `${field} is required` : `${field} ${e.message}`;
    byField.set(field, [...(byField.get(field) ?? []), message]);
  }
  return [...byField.entries()].map(([field, messages]) => ({ field, messages: [...new Set(messages)] }));
}
