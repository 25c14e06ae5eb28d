import { ChorusError } from '@chorus/envelope';

export const HubErrorCodes = Object.freeze({
  WorkflowNotFound: 'WORKFLOW_NOT_FOUND',
} as const);

export class WorkflowNotFoundError extends ChorusError {
  readonly code = HubErrorCodes.WorkflowNotFound;
  constructor(readonly correlationId: string) {
    super(`no workflow ${correlationId}`);
  }
}
