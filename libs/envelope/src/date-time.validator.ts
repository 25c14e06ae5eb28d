import { fullFormats } from 'ajv-formats/dist/formats';
import { ValidateBy, buildMessage, isISO8601, type ValidationOptions } from 'class-validator';

export const IS_DATE_TIME = 'isDateTime';
/**
 * RFC 3339 `date-time` as Date.parse reads it: `T` (or `t`) between date and time, seconds up to
 * 59 (no leap second), and `Z` or an offset with its colon. JSON Schema patterns take no flags, so
 * the case is spelt out; the compiled schema carries this same pattern (envelope.schema.ts).
 */
export const DATE_TIME_PATTERN = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])[Tt]([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d+)?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)$/;
/** The check ajv runs for `format: date-time` (a day that exists in its month: Date.parse rolls 02-30 over to March). */
const rfc3339DateTime = (fullFormats['date-time'] as { validate: (value: string) => boolean }).validate;

/**
 * An RFC 3339 date-time with its offset (what `Date.toISOString()` writes) on a day that exists.
 * The compiled schema checks the same (`format: date-time` plus DATE_TIME_PATTERN), so the fast
 * path and the explanation of a rejection agree.
 */
export function isDateTime(value: unknown): boolean {
  return typeof value === 'string' && DATE_TIME_PATTERN.test(value) && rfc3339DateTime(value) && !Number.isNaN(Date.parse(value));
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

const CALENDAR_DATE = /^\d{4}-\d{2}-\d{2}$/;

/** What a time filter (the list's `since` and `until`, over HTTP and in the CLI) must be, in words. */
export const TIME_FILTER_RULE = 'an RFC 3339 date-time (2026-11-30T10:30:00Z) or a date (2026-11-30)';

/**
 * A time filter: an RFC 3339 date-time with its offset (`2026-11-30T10:30:00Z`), or a calendar date
 * (`2026-11-30`, midnight UTC). Stricter than IsISO8601, which also takes week dates, ordinal dates
 * and basic formats (`2026-334`, `20261130T103010Z`) that the hub cannot read as a time, and than
 * Date.parse, which reads `2026-12-01 15:00` as local time.
 */
export function isTimeFilter(value: unknown): boolean {
  if (typeof value !== 'string' || !isISO8601(value, { strict: true, strictSeparator: true })) return false;
  return (isDateTime(value) || CALENDAR_DATE.test(value)) && !Number.isNaN(Date.parse(value));
}
