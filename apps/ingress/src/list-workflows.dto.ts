import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, MaxLength, Min, ValidateBy, type ValidationOptions } from 'class-validator';
import { AGENT_NAME_PATTERN, TENANT_ID_PATTERN, TIME_FILTER_RULE, WORKFLOW_STATUSES, isTimeFilter, type WorkflowStatus } from '@chorus/envelope';

const LIMIT_MESSAGE = 'limit must be an integer from 1 to 500';

function IsTimeFilter(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isTimeFilter',
      validator: { validate: isTimeFilter, defaultMessage: (a) => `${a?.property} must be ${TIME_FILTER_RULE}` },
    },
    options,
  );
}

/**
 * A `next_cursor` as the hub writes it: base64url of `{"started_at": …, "correlation_id": …}`.
 * The hub refuses any other; checking here names the field instead of passing a refusal through.
 */
export function isListCursor(value: unknown): boolean {
  if (typeof value !== 'string' || !/^[A-Za-z0-9_-]*$/.test(value)) return false;
  try {
    const c: unknown = JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
    return typeof c === 'object' && c !== null && typeof (c as { started_at?: unknown }).started_at === 'string' && typeof (c as { correlation_id?: unknown }).correlation_id === 'string';
  } catch {
    return false;
  }
}

function IsListCursor(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy({ name: 'isListCursor', validator: { validate: isListCursor, defaultMessage: () => 'cursor must be the next_cursor of a previous page' } }, options);
}

/** Query string of `GET /v1/workflows`. */
export class ListWorkflowsDto {
  @ApiPropertyOptional({ enum: WORKFLOW_STATUSES })
  @IsOptional()
  @IsIn(WORKFLOW_STATUSES)
  status?: WorkflowStatus;

  /** Only workflows this agent took part in. */
  @ApiPropertyOptional({ description: 'Only workflows this agent took part in.', example: 'search' })
  @IsOptional()
  @Matches(AGENT_NAME_PATTERN, { message: 'agent must be an agent name ([a-z][a-z0-9_-]{0,62})' })
  agent?: string;

  /** Started at or after this time (RFC 3339 date-time, or a date). */
  @ApiPropertyOptional({ description: 'Started at or after (RFC 3339 date-time, or a date: midnight UTC).', format: 'date-time' })
  @IsOptional()
  @IsTimeFilter()
  since?: string;

  /** Started at or before this time (RFC 3339 date-time, or a date). */
  @ApiPropertyOptional({ description: 'Started at or before (RFC 3339 date-time, or a date: midnight UTC).', format: 'date-time' })
  @IsOptional()
  @IsTimeFilter()
  until?: string;

  @ApiPropertyOptional({ minimum: 1, maximum: 500, default: 50 })
  @IsOptional()
  // Decimal digits only: Number() would also read '0x10', '1e2' or ' 5' as a limit.
  @Transform(({ value }) => (typeof value === 'string' && /^\d{1,6}$/.test(value) ? Number(value) : value))
  @IsInt({ message: LIMIT_MESSAGE })
  @Min(1, { message: LIMIT_MESSAGE })
  @Max(500, { message: LIMIT_MESSAGE })
  limit?: number;

  /** `next_cursor` of the previous page. */
  @ApiPropertyOptional({ description: '`next_cursor` of the previous page.' })
  @IsOptional()
  @IsString()
  @MaxLength(512)
  @IsListCursor()
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

export class RetryWorkflowDto extends CancelWorkflowDto {}
