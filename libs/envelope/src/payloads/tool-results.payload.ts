import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsIn,
  IsNumber,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { MAX_DEGRADATIONS, MAX_DOCUMENT_ID_CHARS, MAX_DOCUMENT_TITLE_CHARS, MAX_PLANNED_PROFILES, PROFILE_NAME_PATTERN } from '../patterns';
import { FusionParameters } from './execution-plan.payload';
import { QueryPayload } from './query.payload';

/** One fused document. */
export class FusedResult {
  /** Document id in the corpus. */
  @IsString()
  @MaxLength(MAX_DOCUMENT_ID_CHARS)
  id!: string;

  /** Document title, when the corpus has one. */
  @IsString()
  @MaxLength(MAX_DOCUMENT_TITLE_CHARS)
  title!: string;

  /** Document text (possibly truncated), for the responder's extractive answer. */
  @IsString()
  @MaxLength(20000)
  text!: string;

  /** RRF score: the sum over profiles of w_p / (k + rank_p). */
  @IsNumber()
  @Min(0)
  score!: number;

  /** 1-based rank of the document in each profile that returned it. */
  @IsObject()
  ranks!: Record<string, number>;
}

export const DEGRADATION_REASONS = ['timeout', 'error', 'unavailable'] as const;
export type DegradationReason = (typeof DEGRADATION_REASONS)[number];

/** A planned profile whose lens is missing from the results. */
export class Degradation {
  /** The profile that did not answer. */
  @Matches(PROFILE_NAME_PATTERN)
  profile!: string;

  /** timeout: no answer in time; error: it answered with an error; unavailable: nobody serves it. */
  @IsIn(DEGRADATION_REASONS)
  reason!: DegradationReason;

  /** What happened, in plain words. */
  @IsString()
  @MaxLength(1000)
  detail!: string;
}

/** `tool_results`: the fused ranking the search worker produced. */
export class ToolResultsPayload {
  /** The query request, carried forward. */
  @IsObject()
  @ValidateNested()
  @Type(() => QueryPayload)
  request!: QueryPayload;

  /** The text that was searched. */
  @IsString()
  @MaxLength(8000)
  search_text!: string;

  /** Fused results, best first, at most the plan's top_k. */
  @IsArray()
  @ArrayMaxSize(1000)
  @IsObject({ each: true })
  @ValidateNested({ each: true })
  @Type(() => FusedResult)
  results!: FusedResult[];

  /** Profiles whose results were fused. */
  @IsArray()
  @ArrayMaxSize(MAX_PLANNED_PROFILES)
  @IsString({ each: true })
  @Matches(PROFILE_NAME_PATTERN, { each: true })
  profiles_used!: string[];

  /** Planned profiles that are missing, with the reason. Empty when every lens answered. */
  @IsArray()
  @ArrayMaxSize(MAX_DEGRADATIONS)
  @IsObject({ each: true })
  @ValidateNested({ each: true })
  @Type(() => Degradation)
  degraded!: Degradation[];

  /** The fusion that was applied. */
  @IsObject()
  @ValidateNested()
  @Type(() => FusionParameters)
  fusion!: FusionParameters;

  /** Candidates per profile before fusion (profile name to count). */
  @IsOptional()
  @IsObject()
  candidates?: Record<string, number>;

  /** Milliseconds from receiving the plan to publishing these results. */
  @IsNumber()
  @Min(0)
  took_ms!: number;
}
