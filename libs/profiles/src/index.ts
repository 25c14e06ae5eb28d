export { createBm25Engine, defaultBm25Options, type Bm25Options } from './bm25.engine';
export { CorpusError, ProfilesErrorCodes } from './corpus.errors';
export { ENGLISH_STOPWORDS, analyzeEnglish, tokenizeWords } from './english.analyzer';
export { parseJsonlCorpus, type CorpusLimits } from './jsonl.corpus';
export { bestPassage, indexSentences, type SentenceIndex } from './passage';
export { slugify, splitMarkdownSections } from './markdown.corpus';
export { PROFILE_ENGINES, PROFILE_ENGINE_RESOURCES, isProfileEngineName, type ProfileEngineName } from './profile.engines';
export type { Document, EngineResources, SearchEngine, SearchEngineFactory, SearchHit } from './search-engine.types';
export { splitSentences } from './sentence.splitter';
export {
  createTrigramEngine,
  defaultTrigramOptions,
  toCharNgrams,
  toWordNgrams,
  type TrigramOptions,
} from './trigram.engine';
export { createWordVectors, parseWinkEmbeddings, type WordVectors } from './word-vectors';
export { createWordvecEngine, defaultWordvecOptions, type WordvecOptions } from './wordvec.engine';
export {
  VOCABULARY_SUBJECT,
  createVocabulary,
  defaultTypoOptions,
  editDistanceWithin,
  type LikelyTypo,
  type TypoOptions,
  type Vocabulary,
  type VocabularyLookupReply,
  type VocabularyLookupRequest,
} from './vocabulary';
