import type { MessageType } from '../message-type';
import { ClassificationResultPayload } from './classification-result.payload';
import { ExecutionPlanPayload } from './execution-plan.payload';
import { OrchestrationCommandPayload } from './orchestration-command.payload';
import { QueryPayload } from './query.payload';
import { ResponsePayload } from './response.payload';
import { StatusUpdatePayload } from './status-update.payload';
import { ToolResultsPayload } from './tool-results.payload';

/** The payload class of each message type. */
export const PAYLOAD_CLASSES = {
  query: QueryPayload,
  classification_result: ClassificationResultPayload,
  execution_plan: ExecutionPlanPayload,
  tool_results: ToolResultsPayload,
  response: ResponsePayload,
  status_update: StatusUpdatePayload,
  orchestration_command: OrchestrationCommandPayload,
} as const satisfies Record<MessageType, new () => object>;

/** The payload type of each message type. */
export type PayloadOf<T extends MessageType> = InstanceType<(typeof PAYLOAD_CLASSES)[T]>;
