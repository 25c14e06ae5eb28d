/**
 * The words of a corpus, to tell a likely typo from a word the corpus simply does not use.
 *
 * A query word is a likely typo when the corpus never uses it, nor any word with its stem (an
 * inflection BM25 already matches is not a typo), and the corpus does use a word with the same first
 * letter one edit away (two for words of eight letters or more; an edit is an insertion, deletion,
 * substitution or swap of adjacent letters). Words the corpus lacks with no such neighbour are just
 * unknown: a term from another field. Only lowercase or capitalised letter-only words are judged:
 * digits and inner capitals mark names (IL6, PPARγ, OmpF, aPKC) that no edit should "correct".
 * Misspellings rarely change the first letter, while a word that differs from a corpus word only
 * there is usually another word (lice/mice, tegmental/segmental); on SciFact's claims this rule
 * keeps real typos (phospate, reponse, microenviroment) and drops most such look-alikes. The planner uses the finding to trust the typo-tolerant `trigram` lens
 * more; the profile app serves it on {@link VOCABULARY_SUBJECT}, since the profiles hold the corpus.
 */
import { ENGLISH_STOPWORDS, toEnglishTerm, tokenizeWords } from './english.analyzer';
import { toIndexedText } from './document.catalog';
import type { Document } from './search-engine.types';

/**
 * Request/reply subject of the vocabulary lookup, served by every profile process (one queue group)
 * and asked by the intent agent. Request `{text}` ({@link VocabularyLookupRequest}), reply
 * {@link VocabularyLookupReply}.
 */
export const VOCABULARY_SUBJECT = 'chorus.profile.vocabulary';

export interface VocabularyLookupRequest {
  text: string;
}

export interface VocabularyLookupReply {
  /** Distinct words of the corpus. */
  vocabulary_size: number;
  typos: LikelyTypo[];
}

/** A query word the corpus lacks, and the corpus word it was most likely meant to be. */
export interface LikelyTypo {
  /** As it appears in the query, lowercased. */
  word: string;
  /** The closest corpus word: fewest edits, then most documents, then alphabetical. */
  suggestion: string;
  /** Edits between the two: 1 or 2. */
  distance: number;
}

export interface TypoOptions {
  /** Shorter words are never reported: too many words lie one edit from a three-letter word. Default 4. */
  minLength: number;
  /** Words at least this long may be two edits from their suggestion; shorter ones one. Default 8. */
  twoEditsFromLength: number;
  /** At most this many typos per text. Default 8. */
  maxTypos: number;
}

export function defaultTypoOptions(): TypoOptions {
  return { minLength: 4, twoEditsFromLength: 8, maxTypos: 8 };
}

export interface Vocabulary {
  /** Distinct words. */
  readonly size: number;
  /** Documents that use `word` (lowercased, as {@link tokenizeWords} splits it); 0 for none. */
  documentFrequency(word: string): number;
  /** The likely typos of `text`, in text order, each word once. */
  findTypos(text: string, options?: Partial<TypoOptions>): LikelyTypo[];
}

// Only letter-only words are judged: digits mark identifiers, versions and gene names (il6, p53).
const LETTERS = /^\p{L}+$/u;
// How tokenizeWords splits, before it lowercases: the case of a query word matters here.
const NON_WORD = /[^\p{L}\p{N}]+/u;
const ASCII_LETTERS = 'abcdefghijklmnopqrstuvwxyz';
// Longer words are not judged: no English word is that long, and it bounds the work.
const MAX_WORD_LENGTH = 31;

/** Builds the vocabulary of `title text` of every document. */
export function createVocabulary(docs: readonly Document[]): Vocabulary {
  const df = new Map<string, number>();
  for (const doc of docs) {
    for (const word of new Set(tokenizeWords(toIndexedText(doc)))) df.set(word, (df.get(word) ?? 0) + 1);
  }
  const stems = new Set<string>();
  // Candidate suggestions, by first letter and length: letter-only words, with a bit mask of the letters they use.
  const buckets = new Map<string, { words: string[]; masks: number[] }>();
  for (const word of df.keys()) {
    const stem = toEnglishTerm(word);
    if (stem !== null) stems.add(stem);
    if (!LETTERS.test(word) || word.length > MAX_WORD_LENGTH) continue;
    const key = bucketKey(word[0], word.length);
    let bucket = buckets.get(key);
    if (!bucket) buckets.set(key, (bucket = { words: [], masks: [] }));
    bucket.words.push(word);
    bucket.masks.push(letterMask(word));
  }

  const better = (a: string, b: string): boolean => {
    const fa = df.get(a)!;
    const fb = df.get(b)!;
    return fa > fb || (fa === fb && a < b);
  };

  /**
   * The best word one edit away that keeps the first letter, by generating every such string over
   * a-z and the word's own letters (about 2 x 26 x length lookups).
   */
  const oneEditAway = (word: string): string | null => {
    let best: string | null = null;
    const consider = (candidate: string) => {
      if (candidate !== word && candidate[0] === word[0] && df.has(candidate) && (best === null || better(candidate, best))) best = candidate;
    };
    const letters = [...new Set([...ASCII_LETTERS, ...word])];
    for (let i = 0; i <= word.length; i++) {
      const head = word.slice(0, i);
      const tail = word.slice(i);
      if (i < word.length) consider(head + tail.slice(1)); // deletion
      if (i + 1 < word.length) consider(head + tail[1] + tail[0] + tail.slice(2)); // swap
      for (const ch of letters) {
        consider(head + ch + tail); // insertion
        if (i < word.length && ch !== tail[0]) consider(head + ch + tail.slice(1)); // substitution
      }
    }
    return best;
  };

  /** The best word two edits away with the same first letter: a scan of those of nearby length that pass the letter filter. */
  const twoEditsAway = (word: string): string | null => {
    const mask = letterMask(word);
    let best: string | null = null;
    for (let length = word.length - 2; length <= word.length + 2; length++) {
      const bucket = buckets.get(bucketKey(word[0], length));
      if (!bucket) continue;
      for (let i = 0; i < bucket.words.length; i++) {
        // Each edit changes at most two letters of the set: more than four differences is too far.
        if (popcount(bucket.masks[i] ^ mask) > 4) continue;
        const candidate = bucket.words[i];
        if (editDistanceWithin(word, candidate, 2) === 2 && (best === null || better(candidate, best))) best = candidate;
      }
    }
    return best;
  };

  function findTypos(text: string, options: Partial<TypoOptions> = {}): LikelyTypo[] {
    const o = { ...defaultTypoOptions(), ...options };
    const typos: LikelyTypo[] = [];
    const seen = new Set<string>();
    for (const original of text.split(NON_WORD)) {
      if (typos.length >= o.maxTypos) break;
      const word = original.toLowerCase();
      if (seen.has(word)) continue;
      seen.add(word);
      if (word.length < o.minLength || word.length > MAX_WORD_LENGTH || !LETTERS.test(word)) continue;
      if (original.slice(1) !== word.slice(1)) continue; // inner capitals: a name, not a word
      if (df.has(word) || ENGLISH_STOPWORDS.has(word)) continue;
      const stem = toEnglishTerm(word);
      if (stem !== null && stems.has(stem)) continue;
      const one = oneEditAway(word);
      if (one !== null) {
        typos.push({ word, suggestion: one, distance: 1 });
        continue;
      }
      if (word.length < o.twoEditsFromLength) continue;
      const two = twoEditsAway(word);
      if (two !== null) typos.push({ word, suggestion: two, distance: 2 });
    }
    return typos;
  }

  return Object.freeze({
    size: df.size,
    documentFrequency: (word: string) => df.get(word) ?? 0,
    findTypos,
  });
}

function bucketKey(first: string, length: number): string {
  return `${first}${length}`;
}

/** Bits 0-25 for a-z, bit 26 for any other letter. */
function letterMask(word: string): number {
  let mask = 0;
  for (let i = 0; i < word.length; i++) {
    const c = word.charCodeAt(i) - 97;
    mask |= c >= 0 && c < 26 ? 1 << c : 1 << 26;
  }
  return mask;
}

function popcount(x: number): number {
  let n = x - ((x >>> 1) & 0x55555555);
  n = (n & 0x33333333) + ((n >>> 2) & 0x33333333);
  return (((n + (n >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

/**
 * Optimal string alignment distance (Levenshtein plus swaps of adjacent characters) between `a`
 * and `b` when it is at most `max`, else `max + 1`. Compares UTF-16 code units, which is exact for
 * the letter-only words of the BMP this is called with.
 */
export function editDistanceWithin(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  const n = b.length;
  let before = new Array<number>(n + 1).fill(0);
  let previous = Array.from({ length: n + 1 }, (_, j) => j);
  let current = new Array<number>(n + 1).fill(0);
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    let rowMin = i;
    for (let j = 1; j <= n; j++) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      let d = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost);
      if (i > 1 && j > 1 && a.charCodeAt(i - 1) === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === b.charCodeAt(j - 1)) {
        d = Math.min(d, before[j - 2] + 1);
      }
      current[j] = d;
      if (d < rowMin) rowMin = d;
    }
    if (rowMin > max) return max + 1;
    [before, previous, current] = [previous, current, before];
  }
  return Math.min(previous[n], max + 1);
}
