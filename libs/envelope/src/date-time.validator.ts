import { ValidateBy, buildMessage, type ValidationOptions } from 'class-validator';

export const IS_DATE_TIME = 'isDateTime';
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

/** An RFC 3339 date-time with its offset (what `Date.toISOString()` writes), and a real date. */
export function isDateTime(value: unknown): boolean {
  return typeof value === 'string' && DATE_TIME.test(value) && !Number.isNaN(Date.parse(value));
}

/**
 * An absolute point in time: `2026-11-30T10:30:00.000Z`. Stricter than IsISO8601, which also takes
 * a bare date or a time without an offset, neither of which is a deadline.
 */
export function IsDateTime(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    { name: IS_DATE_TIME, validator: { validate: isDateTime, defaultMessage: buildMessage((each) => `${each}$property must be an RFC 3339 date-time with an offset`, options) } },
    options,
  );
}
