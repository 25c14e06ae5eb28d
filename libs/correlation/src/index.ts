export { CUT_MARK, SNIPPETS_CUT, fitRecord } from './record-fit';
export { ledgerKey, toSummary, toView, type WorkflowRecord } from './workflow.record';
export { MAX_COMMAND_STEPS, isRetryCommand, queryStreamSeq, retryNotStarted, retryWouldStart } from './workflow.retry';
export { HUB_AGENT, type Effect, type RetryStart, type StatusChange, type Transition } from './workflow.steps';
export {
  MAX_FINISHED_KEYS,
  applyDeadline,
  applyDroppedDuplicate,
  applyEnvelope,
  createRecord,
  recordAnnouncement,
  startsRecord,
  type Delivery,
} from './workflow.transitions';
