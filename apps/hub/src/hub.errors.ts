import { ChorusError, type FieldError } from '@chorus/envelope';

export const HubErrorCodes = Object.freeze({
  WorkflowNotFound: 'WORKFLOW_NOT_FOUND',
  BadRequest: 'BAD_REQUEST',
} as const);

export class WorkflowNotFoundError extends ChorusError {
  readonly code = HubErrorCodes.WorkflowNotFound;
  constructor(readonly correlationId: string) {
    super(`no workflow ${correlationId}`);
  }
}

/** A request the hub refuses: every invalid field, which its reply carries (`error.fields`) as well as its text. */
export class BadHubRequestError extends ChorusError {
  readonly code = HubErrorCodes.BadRequest;
  constructor(readonly fields: readonly FieldError[]) {
    super(fields.flatMap((f) => f.messages).join('; '));
  }
}

/** One invalid field, one message. */
export function badField(field: string, message: string): FieldError {
  return { field, messages: [message] };
}
