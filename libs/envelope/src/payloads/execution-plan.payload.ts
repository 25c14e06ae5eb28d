import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsIn,
  IsInt,
  IsNumber,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { IsDateTime } from '../date-time.validator';
import { IsFusionWeights } from '../fusion-weights.validator';
import { MAX_PLANNED_PROFILES, MAX_RANK_WINDOW, MAX_TOP_K, PROFILE_NAME_PATTERN } from '../patterns';
import { QueryPayload } from './query.payload';

export const ROUTES = ['DIRECT', 'PARALLEL', 'COMPLEX'] as const;
/** DIRECT: one profile the caller named; PARALLEL: several it named; COMPLEX: the planner chose. */
export type Route = (typeof ROUTES)[number];

/** A profile in a plan, or an alternative the planner considered. */
export class PlannedProfile {
  /** Profile name, as its service registers it. */
  @Matches(PROFILE_NAME_PATTERN)
  name!: string;

  /** How useful the planner expects this profile to be for this query, 0 to 1. */
  @IsNumber()
  @Min(0)
  @Max(1)
  confidence!: number;

  /** Why the planner chose it or left it out. */
  @IsString()
  @MaxLength(500)
  reason!: string;
}

/** Reciprocal Rank Fusion parameters the search worker must apply. */
export class FusionParameters {
  /** The RRF constant k (default 60). */
  @IsNumber()
  @Min(0)
  k!: number;

  /** Only the first `rank_window` results of each profile are fused. */
  @IsInt()
  @Min(1)
  @Max(MAX_RANK_WINDOW)
  rank_window!: number;

  /** Per-profile weight w_p (default 1 for every profile), from 0 to MAX_FUSION_WEIGHT. */
  @IsOptional()
  @IsObject()
  @IsFusionWeights()
  weights?: Record<string, number>;
}

/** `execution_plan`: how the planner wants a query searched. */
export class ExecutionPlanPayload {
  /** The query request, carried forward. */
  @IsObject()
  @ValidateNested()
  @Type(() => QueryPayload)
  request!: QueryPayload;

  /** The text to search, directives removed. */
  @IsString()
  @MaxLength(8000)
  search_text!: string;

  /** The route the planner took. */
  @IsIn(ROUTES)
  route!: Route;

  /** Profiles to query, in parallel. */
  @IsArray()
  @ArrayMaxSize(MAX_PLANNED_PROFILES)
  @IsObject({ each: true })
  @ValidateNested({ each: true })
  @Type(() => PlannedProfile)
  profiles!: PlannedProfile[];

  /** Profiles considered and left out, with the reason. */
  @IsArray()
  @ArrayMaxSize(MAX_PLANNED_PROFILES)
  @IsObject({ each: true })
  @ValidateNested({ each: true })
  @Type(() => PlannedProfile)
  alternatives!: PlannedProfile[];

  /** Results the response should carry. */
  @IsInt()
  @Min(1)
  @Max(MAX_TOP_K)
  top_k!: number;

  /** The fusion the search worker applies. */
  @IsObject()
  @ValidateNested()
  @Type(() => FusionParameters)
  fusion!: FusionParameters;

  /** The search step must publish its results by this time, leaving the rest for the responder. */
  @IsDateTime()
  search_deadline!: string;

  /** Fail instead of degrading when a planned profile does not answer. */
  @IsOptional()
  require_all?: boolean;

  /** The planner's reasoning in one or two sentences. */
  @IsString()
  @MaxLength(2000)
  explanation!: string;
}
