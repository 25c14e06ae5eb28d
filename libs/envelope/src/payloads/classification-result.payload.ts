import { Type } from 'class-transformer';
import {
  IsObject,
  ArrayMaxSize,
  IsArray,
  IsIn,
  IsInt,
  IsNumber,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { MAX_CLASSIFICATION_SIGNALS, MAX_ENTITY_CHARS, PROFILE_NAME_PATTERN } from '../patterns';
import { QueryPayload } from './query.payload';

export const INTENTS = ['definition', 'how_to', 'comparison', 'troubleshooting', 'question', 'lookup'] as const;
export type Intent = (typeof INTENTS)[number];
export const MODALITIES = ['natural_language', 'keyword', 'code', 'mixed'] as const;
export type Modality = (typeof MODALITIES)[number];
export const COMPLEXITIES = ['simple', 'moderate', 'complex'] as const;
export type Complexity = (typeof COMPLEXITIES)[number];
export const ENTITY_KINDS = ['quoted', 'identifier', 'proper_noun', 'number', 'flag', 'profile_directive'] as const;
export type EntityKind = (typeof ENTITY_KINDS)[number];

/** A span of the query the classifier recognised. */
export class Entity {
  /** The text of the span, as it appears in the query. */
  @IsString()
  @MaxLength(MAX_ENTITY_CHARS)
  text!: string;

  /** What kind of span it is. */
  @IsIn(ENTITY_KINDS)
  kind!: EntityKind;

  /** Offset of the first character in the query. */
  @IsInt()
  @Min(0)
  start!: number;

  /** Offset one past the last character. */
  @IsInt()
  @Min(0)
  end!: number;
}

/** `classification_result`: what the intent agent understood of a query. */
export class ClassificationResultPayload {
  /** The query request, carried forward so later steps need no lookup. */
  @IsObject()
  @ValidateNested()
  @Type(() => QueryPayload)
  request!: QueryPayload;

  /** The query text with directives (`profile:…`) removed: what should be searched. */
  @IsString()
  @MaxLength(8000)
  search_text!: string;

  /** The kind of question. */
  @IsIn(INTENTS)
  intent!: Intent;

  /** Recognised spans. */
  @IsArray()
  @ArrayMaxSize(64)
  @IsObject({ each: true })
  @ValidateNested({ each: true })
  @Type(() => Entity)
  entities!: Entity[];

  /** The form of the query. */
  @IsIn(MODALITIES)
  modality!: Modality;

  /** How much work the query likely needs. */
  @IsIn(COMPLEXITIES)
  complexity!: Complexity;

  /** Confidence of the intent, 0 to 1. */
  @IsNumber()
  @Min(0)
  @Max(1)
  confidence!: number;

  /** Profiles named explicitly in the text (`profile:bm25`) or the request. */
  @IsArray()
  @IsString({ each: true })
  @Matches(PROFILE_NAME_PATTERN, { each: true })
  explicit_profiles!: string[];

  /** The rules that fired, for explanation and debugging. */
  @IsArray()
  @ArrayMaxSize(MAX_CLASSIFICATION_SIGNALS)
  @IsString({ each: true })
  signals!: string[];
}
