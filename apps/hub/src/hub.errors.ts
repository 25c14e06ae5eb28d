import { ChorusError } from '@chorus/envelope';

export const HubErrorCodes = Object.freeze({
  WorkflowNotFound: 'WORKFLOW_NOT_FOUND',
  NotActive: 'HUB_NOT_ACTIVE',
  Busy: 'HUB_BUSY',
  NotRecordedYet: 'WORKFLOW_NOT_RECORDED_YET',
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

/**
 * A status update or command of a workflow whose query is in the stream but not in the ledger yet
 * (the hub's write of it failed, and it is delivered again): left for later, in the workflow's order.
 */
export class WorkflowNotRecordedYetError extends ChorusError {
  readonly code = HubErrorCodes.NotRecordedYet;
  constructor(correlationId: string) {
    super(`the query of workflow ${correlationId} is in the stream but not in the ledger yet; this envelope waits for it`, { retryable: true });
  }
}
