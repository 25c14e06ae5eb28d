import { IsBoolean, IsString, Matches, MaxLength } from 'class-validator';
import type { ErrorDetailsShape } from './errors';

/** `error_details` of an envelope whose status is `error`. */
export class ErrorDetails implements ErrorDetailsShape {
  /** SCREAMING_SNAKE code of the error (`PROFILE_UNAVAILABLE`, `INTERNAL`, …). */
  @IsString()
  @Matches(/^[A-Z][A-Z0-9_]{0,63}$/, { message: 'error_type must be a SCREAMING_SNAKE code' })
  error_type!: string;

  /** What went wrong, in plain words. */
  @IsString()
  @MaxLength(4000)
  error_message!: string;

  /** True when retrying the same step with the same input may succeed. */
  @IsBoolean()
  retry_possible!: boolean;
}
