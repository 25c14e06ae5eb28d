import { Type } from 'class-transformer';
import { IsIn, IsObject, IsOptional, IsString, MaxLength, ValidateNested } from 'class-validator';
import { MESSAGE_TYPES, WORKFLOW_STATUSES, type MessageType, type WorkflowStatus } from '../message-type';
import { ErrorDetails } from '../error-details';

/**
 * `status_update`: a change of workflow status. The hub publishes one for every transition it
 * records; an agent publishes one with `status: "error"` on the envelope when its step failed.
 */
export class StatusUpdatePayload {
  /** The workflow status this update reports (for an agent's failure report: `failed`). */
  @IsIn(WORKFLOW_STATUSES)
  workflow_status!: WorkflowStatus;

  /** The status before this update, when the hub knows it. */
  @IsOptional()
  @IsIn(WORKFLOW_STATUSES)
  previous_status?: WorkflowStatus | null;

  /** The message type whose handling this update is about (the failed step's input). */
  @IsOptional()
  @IsIn(MESSAGE_TYPES)
  step?: MessageType | null;

  /** Why the status changed, in plain words. */
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  reason?: string | null;

  /** The error that caused a failure. */
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => ErrorDetails)
  error?: ErrorDetails | null;
}
