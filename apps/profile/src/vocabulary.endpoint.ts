import { serveRequests, type Bus, type Responder } from '@chorus/bus';
import { BadRequestError, MAX_QUERY_CHARS, badField, hasCharsBetween } from '@chorus/envelope';
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
    return { vocabulary_size: vocabulary.size, typos: vocabulary.findTypos(parseLookup(request).text) };
  });
}

/**
 * A lookup's request, checked: the text of a query (what intent asks about is a query's search text,
 * so no longer than a query). Anything else is refused naming the field, not looked up as whatever
 * it coerces to (`{}` answered "no typos").
 */
function parseLookup(request: unknown): VocabularyLookupRequest {
  const text = (request as Partial<VocabularyLookupRequest> | null)?.text;
  if (typeof text !== 'string' || !hasCharsBetween(text, 0, MAX_QUERY_CHARS)) {
    throw new BadRequestError([badField('text', `text must be a string of at most ${MAX_QUERY_CHARS} characters`)]);
  }
  return { text };
}
