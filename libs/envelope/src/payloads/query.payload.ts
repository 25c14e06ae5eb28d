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
import { MaxChars } from '../max-chars.validator';
import { CORRELATION_ID_PATTERN, MAX_QUERY_CHARS, MAX_TOP_K, PROFILE_NAME_PATTERN, SESSION_ID_PATTERN, VISIBLE_CHARACTER_PATTERN, VISIBLE_CHARACTER_RULE } from '../patterns';

/** `query`: what a caller asked. Published by the ingress, the CLI or any NATS client. */
export class QueryPayload {
  /** The question or keywords, as typed. `profile:<name>` tokens select profiles explicitly. */
  @IsString()
  @IsNotEmpty()
  @MaxChars(MAX_QUERY_CHARS)
  @Matches(VISIBLE_CHARACTER_PATTERN, { message: VISIBLE_CHARACTER_RULE })
  query!: string;

  /** The caller's session, when it has one; used by the session correlation-id strategy. */
  @IsOptional()
  @IsString()
  @Matches(SESSION_ID_PATTERN, { message: 'session_id must match [A-Za-z0-9_-]{1,64}' })
  session_id?: string | null;

  /** Profiles the caller asks for by name; absent or empty lets the planner choose. */
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(8)
  @ArrayUnique({ message: 'profiles must not name a profile twice' })
  @IsString({ each: true })
  @Matches(PROFILE_NAME_PATTERN, { each: true, message: 'each profile must match [a-z][a-z0-9_-]{0,31}' })
  profiles?: string[] | null;

  /** How many ranked results the response should carry. */
  @IsInt()
  @Min(1)
  @Max(MAX_TOP_K)
  top_k!: number;

  /** When true, a result missing any planned profile fails the workflow instead of degrading it. */
  @IsBoolean()
  require_all!: boolean;

  /**
   * The workflow this one retries (set by the hub when it starts a retry); absent or null on a
   * workflow that is nobody's retry.
   */
  @IsOptional()
  @IsString()
  @Matches(CORRELATION_ID_PATTERN, { message: 'retry_of must match [A-Za-z0-9_-]{1,128}' })
  retry_of?: string | null;
}
