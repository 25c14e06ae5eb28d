import { ValidateBy, buildMessage, type ValidationOptions } from 'class-validator';

export const IS_FUSION_WEIGHTS = 'isFusionWeights';
/** The largest per-profile RRF weight: Σ w_p / (k + rank) stays finite for any k ≥ 0 and any plan. */
export const MAX_FUSION_WEIGHT = 1000;

/** An object of per-profile weights, each a finite number from 0 to {@link MAX_FUSION_WEIGHT}. */
export function isFusionWeights(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  return Object.values(value).every((w) => typeof w === 'number' && Number.isFinite(w) && w >= 0 && w <= MAX_FUSION_WEIGHT);
}

/**
 * RRF weights: a negative weight would push a document below those no profile returned, and an
 * unbounded one can sum to Infinity, which no fused score may be.
 */
export function IsFusionWeights(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: IS_FUSION_WEIGHTS,
      validator: {
        validate: isFusionWeights,
        defaultMessage: buildMessage((each) => `${each}$property must map each profile to a number from 0 to ${MAX_FUSION_WEIGHT}`, options),
      },
    },
    options,
  );
}
