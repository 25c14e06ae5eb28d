import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsInt,
  IsNumber,
  IsObject,
  IsString,
  Matches,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { MAX_DEGRADATIONS, MAX_DOCUMENT_ID_CHARS, MAX_DOCUMENT_TITLE_CHARS, MAX_PLANNED_PROFILES, PROFILE_NAME_PATTERN } from '../patterns';
import { Degradation } from './tool-results.payload';
import { FusionParameters } from './execution-plan.payload';

/** One ranked result as the caller sees it. */
export class RankedResult {
  /** 1-based position in the answer. */
  @IsInt()
  @Min(1)
  rank!: number;

  /** Document id in the corpus. */
  @IsString()
  @MaxLength(MAX_DOCUMENT_ID_CHARS)
  id!: string;

  /** Document title. */
  @IsString()
  @MaxLength(MAX_DOCUMENT_TITLE_CHARS)
  title!: string;

  /** The passage of the document that best matches the query. */
  @IsString()
  @MaxLength(2000)
  snippet!: string;

  /** Fused (RRF) score. */
  @IsNumber()
  @Min(0)
  score!: number;

  /** 1-based rank in each profile that returned the document. */
  @IsObject()
  ranks!: Record<string, number>;
}

/** Where a sentence of the answer came from. */
export class AnswerSource {
  /** The sentence, as quoted in the answer. */
  @IsString()
  @MaxLength(2000)
  sentence!: string;

  /** The document it was taken from. */
  @IsString()
  @MaxLength(512)
  document_id!: string;

  /** The rank of that document among the results. */
  @IsInt()
  @Min(1)
  result_rank!: number;
}

/** How the answer was produced. */
export class Provenance {
  /** One entry per sentence of the answer. */
  @IsArray()
  @ArrayMaxSize(100)
  @IsObject({ each: true })
  @ValidateNested({ each: true })
  @Type(() => AnswerSource)
  sources!: AnswerSource[];

  /** Profiles whose results were fused. */
  @IsArray()
  @ArrayMaxSize(MAX_PLANNED_PROFILES)
  @IsString({ each: true })
  @Matches(PROFILE_NAME_PATTERN, { each: true })
  profiles_used!: string[];

  /** Planned profiles that did not contribute. */
  @IsArray()
  @ArrayMaxSize(MAX_DEGRADATIONS)
  @IsObject({ each: true })
  @ValidateNested({ each: true })
  @Type(() => Degradation)
  degraded!: Degradation[];

  /** The fusion that ranked the results. */
  @IsObject()
  @ValidateNested()
  @Type(() => FusionParameters)
  fusion!: FusionParameters;

  /** How the answer text was made (`extractive`). */
  @IsString()
  @MaxLength(200)
  method!: string;
}

/** `response`: the answer to the query, which completes the workflow. */
export class ResponsePayload {
  /** The query as asked. */
  @IsString()
  @MaxLength(8000)
  query!: string;

  /** A short extractive answer: the best-matching sentences, each cited `[n]` by result rank. */
  @IsString()
  @MaxLength(8000)
  answer!: string;

  /** Ranked results, best first. */
  @IsArray()
  @ArrayMaxSize(100)
  @IsObject({ each: true })
  @ValidateNested({ each: true })
  @Type(() => RankedResult)
  results!: RankedResult[];

  /** Where the answer and the ranking came from. */
  @IsObject()
  @ValidateNested()
  @Type(() => Provenance)
  provenance!: Provenance;
}
