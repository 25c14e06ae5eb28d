export { ledgerKey, toSummary, toView, type WorkflowRecord } from './workflow.record';
export {
  HUB_AGENT,
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
