import { ValidateBy, buildMessage, type ValidationOptions } from 'class-validator';
import { hasCharsBetween } from './patterns';

export const MAX_CHARS = 'maxChars';

/**
 * At most `max` characters, counted by code point: as the compiled JSON Schema's `maxLength` counts
 * (envelope.schema.ts converts this rule to it) and as the profiles count a query. class-validator's
 * MaxLength leaves variation selectors out, so a query of 2,100 `❤️` passed the edge and was then
 * refused by the schema and the profiles.
 */
export function MaxChars(max: number, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: MAX_CHARS,
      constraints: [max],
      validator: {
        validate: (value: unknown) => typeof value === 'string' && hasCharsBetween(value, 0, max),
        defaultMessage: buildMessage((each) => `${each}$property must be shorter than or equal to $constraint1 characters`, options),
      },
    },
    options,
  );
}
