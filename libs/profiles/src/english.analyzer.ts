/**
 * Text analysis shared by the engines and by callers that score sentences or check typos.
 * It mirrors Lucene's EnglishAnalyzer closely enough to reproduce Anserini-style BM25 figures:
 * lowercase, possessive removal, stopwords, Porter stemming.
 */
import { stemmer } from 'stemmer';

/** Lucene's `EnglishAnalyzer.ENGLISH_STOP_WORDS_SET`: 33 words, no more, so scores match Lucene. */
export const ENGLISH_STOPWORDS: ReadonlySet<string> = Object.freeze(
  new Set([
    'a', 'an', 'and', 'are', 'as', 'at', 'be', 'but', 'by', 'for', 'if', 'in', 'into', 'is', 'it', 'no',
    'not', 'of', 'on', 'or', 'such', 'that', 'the', 'their', 'then', 'there', 'these', 'they', 'this',
    'to', 'was', 'will', 'with',
  ]),
);

// Letters and digits of every script count as word characters so that Greek letters, accented
// names and CJK survive; everything else (punctuation, dashes, symbols) separates words.
const NON_WORD = /[^\p{L}\p{N}]+/u;
// `'s` (straight, curly or full-width apostrophe) at the end of a word, as Lucene's
// EnglishPossessiveFilter removes it. Applied before splitting, where the apostrophe would vanish.
const POSSESSIVE = /([\p{L}\p{N}])['\u2019\uFF07][sS](?![\p{L}\p{N}])/gu;

/** Lowercased words split on non-alphanumerics; no stopword removal, no stemming. */
export function tokenizeWords(text: string): string[] {
  return text
    .toLowerCase()
    .split(NON_WORD)
    .filter((word) => word.length > 0);
}

/** Words for the English analyzer: lowercased, possessive `'s` removed, split on non-alphanumerics. */
export function toEnglishWords(text: string): string[] {
  return tokenizeWords(text.replace(POSSESSIVE, '$1'));
}

// Porter stemming is most of the analyzer's cost, and the words of a corpus and its queries repeat:
// the stems of recent words are remembered (bounded: the oldest half is dropped when full).
const STEM_CACHE_SIZE = 50_000;
let stems = new Map<string, string>();
let olderStems = new Map<string, string>();

function stem(word: string): string {
  let s = stems.get(word);
  if (s !== undefined) return s;
  s = olderStems.get(word) ?? stemmer(word);
  stems.set(word, s);
  if (stems.size >= STEM_CACHE_SIZE) {
    olderStems = stems;
    stems = new Map();
  }
  return s;
}

/** The indexed term of one word from {@link toEnglishWords}: its Porter stem, or null for a stopword. */
export function toEnglishTerm(word: string): string | null {
  return ENGLISH_STOPWORDS.has(word) ? null : stem(word);
}

/**
 * The English analyzer behind BM25: lowercase, strip possessive `'s`, split on non-alphanumerics,
 * drop {@link ENGLISH_STOPWORDS}, Porter-stem. Returns terms in text order, duplicates kept.
 */
export function analyzeEnglish(text: string): string[] {
  const terms: string[] = [];
  for (const word of toEnglishWords(text)) {
    const term = toEnglishTerm(word);
    if (term !== null) terms.push(term);
  }
  return terms;
}
