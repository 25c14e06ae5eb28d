import { serveRequests, type Bus, type Responder } from '@chorus/bus';
import type { Logger } from '@chorus/observability';
import {
  VOCABULARY_SUBJECT,
  createVocabulary,
  type Document,
  type VocabularyLookupReply,
  type VocabularyLookupRequest,
} from '@chorus/profiles';

/** The queue group of the vocabulary lookup: every profile process answers, each request once. */
const VOCABULARY_QUEUE = 'chorus-profile-vocabulary';
/** Longer texts are cut: a query, not a document, is what the lookup is for. */
const MAX_TEXT_CHARS = 4096;

/**
 * Serves the corpus vocabulary on {@link VOCABULARY_SUBJECT}: the intent agent asks which words
 * of a query are likely typos of corpus words (so the planner can lean on `trigram`). The profiles
 * own the corpus, so they answer; every profile process of a deployment indexes the same corpus.
 */
export function serveVocabulary(bus: Bus, documents: readonly Document[], log: Logger): Responder {
  const t0 = Date.now();
  const vocabulary = createVocabulary(documents);
  log.info({ words: vocabulary.size, build_ms: Date.now() - t0 }, 'vocabulary serving');
  return serveRequests<VocabularyLookupReply>(bus, VOCABULARY_SUBJECT, VOCABULARY_QUEUE, log, async (request) => {
    const text = String((request as Partial<VocabularyLookupRequest>).text ?? '').slice(0, MAX_TEXT_CHARS);
    return { vocabulary_size: vocabulary.size, typos: vocabulary.findTypos(text) };
  });
}
