import { requestReply, type Bus } from '@chorus/bus';
import type { Logger } from '@chorus/observability';
import { VOCABULARY_SUBJECT, type LikelyTypo, type VocabularyLookupReply, type VocabularyLookupRequest } from '@chorus/profiles';

/** Finds the likely typos of a query; null when nobody could tell in time. */
export interface TypoCheck {
  findTypos(text: string, deadline: Date): Promise<LikelyTypo[] | null>;
}

export interface TypoCheckOptions {
  /** Longest wait for the vocabulary lookup; a query is classified without typo hints after it. */
  timeoutMs: number;
  /** Never more than this share of the time the workflow has left. */
  maxShareOfRemaining: number;
}

export function defaultTypoCheckOptions(): TypoCheckOptions {
  return { timeoutMs: 250, maxShareOfRemaining: 0.1 };
}

/** A check that never finds anything (no vocabulary to ask). */
export const NO_TYPO_CHECK: TypoCheck = Object.freeze({ findTypos: async () => null });

/**
 * Asks the profiles' vocabulary lookup over NATS request/reply (the profiles own the corpus).
 * Typo hints are optional: without an answer in a short, deadline-bounded time (no profile
 * running, a busy one), the query goes on without them.
 */
export function createBusTypoCheck(bus: Bus, log: Logger, options: TypoCheckOptions = defaultTypoCheckOptions()): TypoCheck {
  return {
    async findTypos(text: string, deadline: Date): Promise<LikelyTypo[] | null> {
      const timeoutMs = Math.min(options.timeoutMs, Math.floor((deadline.getTime() - Date.now()) * options.maxShareOfRemaining));
      if (timeoutMs < 1) return null;
      try {
        const request: VocabularyLookupRequest = { text };
        const reply = await requestReply<VocabularyLookupReply>(bus, VOCABULARY_SUBJECT, request, timeoutMs);
        return Array.isArray(reply.typos) ? reply.typos : null;
      } catch (error) {
        log.debug({ err: error }, 'vocabulary lookup unavailable; no typo hints');
        return null;
      }
    },
  };
}
