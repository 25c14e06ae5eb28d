import { ValidationPipe, type ArgumentMetadata } from '@nestjs/common';
import { getMetadataStorage } from 'class-validator';
import { isWithinJsonLimits, sanitizeJson, type FieldError } from '@chorus/envelope';
import { InvalidRequestException, repeatedParamErrors, toInvalidRequest } from './http.errors';
import { unknownQueryParams } from './query-params.guard';

/**
 * Own keys named like a member of Object.prototype (`toString`, `valueOf`, …): class-transformer
 * skips them without a word, so the whitelist never sees them and they would pass as if not sent.
 * No request field of the API has such a name.
 */
function inheritedNames(value: object): FieldError[] {
  return Object.keys(value)
    .filter((key) => key in Object.prototype)
    .map((key) => ({ field: key, messages: [`property ${key} should not exist`] }));
}

/**
 * Query-string parameters given more than once (`?status=a&status=b` reaches the validators as a
 * list, which they answered with "status must be one of …", as if the value were wrong).
 */
function repeatedParams(query: object): FieldError[] {
  return Object.entries(query).flatMap(([key, v]) => repeatedParamErrors(key, v));
}

/** What a 400 says it is about, per the part of the request that was invalid. */
const WHERE: Partial<Record<ArgumentMetadata['type'], string>> = {
  body: 'invalid request body',
  query: 'invalid query string',
  param: 'invalid path',
};

/**
 * The API's ValidationPipe (whitelist, forbid unknown fields, transform), made safe for any JSON a
 * client sends: class-transformer and class-validator recurse and read `constructor`, so a body
 * nested a few thousand levels deep overflowed the stack and an own `constructor` or `__proto__` key
 * threw, both answered as 500s. Those places are reported as invalid fields of their own, and the
 * rest of the value is still validated, so one 400 names every invalid field; its message says
 * whether the body, the query string or the path was wrong.
 */
export class RequestValidationPipe extends ValidationPipe {
  constructor() {
    super({ whitelist: true, forbidNonWhitelisted: true, transform: true, exceptionFactory: toInvalidRequest });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const message = WHERE[metadata.type] ?? 'invalid request';
    let hazards: FieldError[] = [];
    if (typeof value === 'object' && value !== null && !isWithinJsonLimits(value)) {
      const clean = sanitizeJson(value);
      hazards = clean.errors;
      value = clean.value;
    }
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) hazards.push(...inheritedNames(value));
    if (metadata.type === 'query' && typeof value === 'object' && value !== null) hazards.push(...repeatedParams(value));
    let result: unknown;
    try {
      result = await super.transform(value, metadata);
    } catch (e) {
      if (!(e instanceof InvalidRequestException)) throw e;
      // A hazard left a null in its place: what the validators say of that null adds nothing.
      const named = new Set(hazards.map((h) => h.field));
      const errors = [...hazards, ...e.fieldErrors.filter((f) => !named.has(f.field))];
      throw new InvalidRequestException(metadata.type === 'query' ? asUnknownParams(errors, metadata.metatype) : errors, message);
    }
    if (hazards.length > 0) throw new InvalidRequestException(hazards, message);
    return result;
  }
}

/**
 * A query string's field the whitelist refused ("property x should not exist") said as every other
 * route says it: an unknown query parameter, with the ones the route takes.
 */
function asUnknownParams(errors: FieldError[], dto: ArgumentMetadata['metatype']): FieldError[] {
  if (!dto) return errors;
  const allowed = [...new Set(getMetadataStorage().getTargetValidationMetadatas(dto, '', false, false).map((m) => m.propertyName))];
  return errors.map((f) => (f.messages.length === 1 && f.messages[0] === `property ${f.field} should not exist` ? unknownQueryParams([f.field], allowed)[0] : f));
}
