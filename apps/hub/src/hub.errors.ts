import { ChorusError } from '@chorus/envelope';

export const HubErrorCodes = Object.freeze({
  WorkflowNotFound: 'WORKFLOW_NOT_FOUND',
  NotActive: 'HUB_NOT_ACTIVE',
  Busy: 'HUB_BUSY',
} as const);

export class WorkflowNotFoundError extends ChorusError {
  readonly code = HubErrorCodes.WorkflowNotFound;
  constructor(readonly correlationId: string) {
    super(`no workflow ${correlationId}`);
  }
}

/**
 * This hub replica no longer holds the lease (it stalled past it, or is stepping down): it writes
 * nothing, and the envelope is left to be delivered again, to the active hub.
 */
export class HubNotActiveError extends ChorusError {
  readonly code = HubErrorCodes.NotActive;
  // The hub logs 'lease ran out while applying' once for the batch.
  override readonly reported = true;
  constructor() {
    super('this hub replica no longer holds the lease; the active hub applies the envelope', { retryable: true });
  }
}

/** The hub runs as many reads of this kind as it takes at once: try again shortly. */
export class HubBusyError extends ChorusError {
  readonly code = HubErrorCodes.Busy;
  constructor(detail: string) {
    super(`the hub is busy: ${detail}; try again shortly`, { retryable: true });
  }
}
