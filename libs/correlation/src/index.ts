export { CUT_MARK, SNIPPETS_CUT, fitRecord } from './record-fit';
export { ledgerKey, toSummary, toView, type WorkflowRecord } from './workflow.record';
export {
  HUB_AGENT,
  MAX_COMMAND_STEPS,
  MAX_FINISHED_KEYS,
  applyDeadline,
  applyDroppedDuplicate,
  applyEnvelope,
  createRecord,
  isRetryCommand,
  queryStreamSeq,
  recordAnnouncement,
  startsRecord,
  retryNotStarted,
  retryWouldStart,
  type Delivery,
  type Effect,
  type RetryStart,
  type StatusChange,
  type Transition,
} from './workflow.transitions';
