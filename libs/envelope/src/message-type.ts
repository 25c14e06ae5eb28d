/** Every kind of envelope that travels on a workflow subject. */
export const MESSAGE_TYPES = [
  'query',
  'classification_result',
  'execution_plan',
  'tool_results',
  'response',
  'status_update',
  'orchestration_command',
] as const;

export type MessageType = (typeof MESSAGE_TYPES)[number];

/** Named constants, so call sites never spell a message type as a string literal. */
export const MessageTypes = Object.freeze({
  Query: 'query',
  ClassificationResult: 'classification_result',
  ExecutionPlan: 'execution_plan',
  ToolResults: 'tool_results',
  Response: 'response',
  StatusUpdate: 'status_update',
  OrchestrationCommand: 'orchestration_command',
} as const satisfies Record<string, MessageType>);

export function isMessageType(value: unknown): value is MessageType {
  return typeof value === 'string' && (MESSAGE_TYPES as readonly string[]).includes(value);
}

/** The `next_steps` of a query: the agents a workflow goes through, in order. */
export const QUERY_NEXT_STEPS: readonly string[] = Object.freeze(['intent', 'planner', 'search', 'responder']);

/** Outcome of the step that produced an envelope. */
export const ENVELOPE_STATUSES = ['success', 'error', 'pending'] as const;
export type EnvelopeStatus = (typeof ENVELOPE_STATUSES)[number];

/** Lifecycle of a workflow as the hub records it. */
export const WORKFLOW_STATUSES = ['pending', 'running', 'completed', 'failed', 'timed_out', 'cancelled'] as const;
export type WorkflowStatus = (typeof WORKFLOW_STATUSES)[number];
export const TERMINAL_STATUSES: readonly WorkflowStatus[] = ['completed', 'failed', 'timed_out', 'cancelled'];

export function isTerminalStatus(status: WorkflowStatus): boolean {
  return TERMINAL_STATUSES.includes(status);
}
