export { ledgerKey, toSummary, toView, type WorkflowRecord } from './workflow.record';
export {
  HUB_AGENT,
  MAX_COMMAND_STEPS,
  applyDeadline,
  applyDroppedDuplicate,
  applyEnvelope,
  createRecord,
  isRetryCommand,
  queryStreamSeq,
  recordAnnouncement,
  retryNotStarted,
  retryWouldStart,
  type Delivery,
  type Effect,
  type RetryStart,
  type StatusChange,
  type Transition,
} from './workflow.transitions';
