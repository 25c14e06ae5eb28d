import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsISO8601, IsOptional, IsString, Matches, Max, MaxLength, Min } from 'class-validator';
import { AGENT_NAME_PATTERN, TENANT_ID_PATTERN, WORKFLOW_STATUSES, type WorkflowStatus } from '@chorus/envelope';

/** Query string of `GET /v1/workflows`. */
export class ListWorkflowsDto {
  @ApiPropertyOptional({ enum: WORKFLOW_STATUSES })
  @IsOptional()
  @IsIn(WORKFLOW_STATUSES)
  status?: WorkflowStatus;

  /** Only workflows this agent took part in. */
  @ApiPropertyOptional({ description: 'Only workflows this agent took part in.', example: 'search' })
  @IsOptional()
  @Matches(AGENT_NAME_PATTERN, { message: 'agent must be an agent name' })
  agent?: string;

  /** Started at or after this time (ISO 8601). */
  @ApiPropertyOptional({ description: 'Started at or after (ISO 8601).', format: 'date-time' })
  @IsOptional()
  @IsISO8601({ strict: true })
  since?: string;

  /** Started at or before this time (ISO 8601). */
  @ApiPropertyOptional({ description: 'Started at or before (ISO 8601).', format: 'date-time' })
  @IsOptional()
  @IsISO8601({ strict: true })
  until?: string;

  @ApiPropertyOptional({ minimum: 1, maximum: 500, default: 50 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(500)
  limit?: number;

  /** `next_cursor` of the previous page. */
  @ApiPropertyOptional({ description: '`next_cursor` of the previous page.' })
  @IsOptional()
  @IsString()
  @MaxLength(512)
  cursor?: string;

  @ApiPropertyOptional({ description: "Development mode: one tenant's workflows. With API keys: must be the key's tenant." })
  @IsOptional()
  @Matches(TENANT_ID_PATTERN, { message: 'tenant_id must match [a-z0-9][a-z0-9_-]{0,62}' })
  tenant_id?: string;
}

/** Body of `POST /v1/workflows/:id/cancel` (optional). */
export class CancelWorkflowDto {
  @ApiPropertyOptional({ description: 'Why, for the audit trail.' })
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  reason?: string;
}
