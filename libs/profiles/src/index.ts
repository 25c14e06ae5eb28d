export { createBm25Engine, defaultBm25Options, type Bm25Options } from './bm25.engine';
export { CorpusError, ProfilesErrorCodes } from './corpus.errors';
export { ENGLISH_STOPWORDS, analyzeEnglish, tokenizeWords } from './english.analyzer';
export { parseJsonlCorpus } from './jsonl.corpus';
export { slugify, splitMarkdownSections } from './markdown.corpus';
export { PROFILE_ENGINES, isProfileEngineName, type ProfileEngineName } from './profile.engines';
export type { Document, SearchEngine, SearchEngineFactory, SearchHit } from './search-engine.types';
export { splitSentences } from './sentence.splitter';
export {
  createTrigramEngine,
  defaultTrigramOptions,
  toCharNgrams,
  toWordNgrams,
  type TrigramOptions,
} from './trigram.engine';
