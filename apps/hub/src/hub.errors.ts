import { ChorusError } from '@chorus/envelope';

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

export class BadHubRequestError extends ChorusError {
  readonly code = HubErrorCodes.BadRequest;
  constructor(message: string) {
    super(message);
  }
}
