import {
  ArrayMaxSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
} from 'class-validator';
import { DEADLINE_LIMIT_MS } from '@chorus/config';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { MAX_QUERY_CHARS, MAX_TOP_K, MaxChars, PROFILE_NAME_PATTERN, SESSION_ID_PATTERN, TENANT_ID_PATTERN, VISIBLE_CHARACTER_PATTERN, VISIBLE_CHARACTER_RULE } from '@chorus/envelope';

/** Body of `POST /v1/queries`. */
export class SubmitQueryDto {
  /** The question or keywords. */
  @ApiProperty({ description: 'The question or keywords; `profile:<name>` tokens pick profiles.', maxLength: MAX_QUERY_CHARS, example: 'how does chorus drop duplicates' })
  @IsString()
  @IsNotEmpty()
  @MaxChars(MAX_QUERY_CHARS)
  @Matches(VISIBLE_CHARACTER_PATTERN, { message: VISIBLE_CHARACTER_RULE })
  query!: string;

  /** The tenant; `default` when absent. */
  @ApiPropertyOptional({ description: "The tenant (with API keys: the key's tenant).", pattern: TENANT_ID_PATTERN.source, example: 'acme' })
  @IsOptional()
  @IsString()
  @Matches(TENANT_ID_PATTERN, { message: 'tenant_id must match [a-z0-9][a-z0-9_-]{0,62}' })
  tenant_id?: string;

  /** The caller's session id. */
  @ApiPropertyOptional({ description: "The caller's session id.", pattern: SESSION_ID_PATTERN.source })
  @IsOptional()
  @IsString()
  @Matches(SESSION_ID_PATTERN, { message: 'session_id must match [A-Za-z0-9_-]{1,64}' })
  session_id?: string;

  /** Profiles to use; the planner chooses when absent. */
  @ApiPropertyOptional({ description: 'Profiles to use; the planner chooses when absent.', type: [String], example: ['bm25', 'trigram'] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(8)
  @ArrayUnique({ message: 'profiles must not name a profile twice' })
  @IsString({ each: true })
  @Matches(PROFILE_NAME_PATTERN, { each: true, message: 'each profile must match [a-z][a-z0-9_-]{0,31}' })
  profiles?: string[];

  /** Results to return (1–100). */
  @ApiPropertyOptional({ description: 'Results to return.', minimum: 1, maximum: MAX_TOP_K, default: 10 })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_TOP_K)
  top_k?: number;

  /** The workflow's deadline, in milliseconds from now. */
  @ApiPropertyOptional({ description: "The workflow's deadline, in milliseconds from now.", minimum: 100, default: 10000 })
  @IsOptional()
  @IsInt()
  @Min(100)
  // The bound of any deployment; the ingress then holds a request to its own CHORUS_MAX_DEADLINE_MS.
  @Max(DEADLINE_LIMIT_MS)
  deadline_ms?: number;

  /** Fail instead of degrading when a planned profile does not answer. */
  @ApiPropertyOptional({ description: 'Fail instead of degrading when a planned profile does not answer.', default: false })
  @IsOptional()
  @IsBoolean()
  require_all?: boolean;
}
