import { ChorusError, type FieldError } from '@chorus/envelope';

export const ProfileErrorCodes = Object.freeze({
  BadRequest: 'BAD_REQUEST',
} as const);

/**
 * A search or documents request a profile refuses: every invalid field, so the caller fixes them
 * all at once. Its message, the fields' messages, is what the service's error reply says.
 */
export class BadProfileRequestError extends ChorusError {
  readonly code = ProfileErrorCodes.BadRequest;
  constructor(readonly fields: readonly FieldError[]) {
    super(fields.flatMap((f) => f.messages).join('; '));
  }
}

/** One invalid field, one message. */
export function badField(field: string, message: string): FieldError {
  return { field, messages: [message] };
}
