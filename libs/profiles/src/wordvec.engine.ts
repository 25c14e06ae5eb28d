/**
 * The semantic lens: each document and query becomes the average of its words' pretrained vectors,
 * and documents rank by cosine similarity to the query. It matches related words rather than equal
 * spellings, so it can surface documents both lexical lenses miss; on its own it is far weaker than
 * BM25 (docs/retrieval.md), and its job is to be fused.
 *
 * The average is weighted the way SIF (Arora, Liang & Ma, 2017) argues for: frequent words carry
 * little meaning, so each word counts tf x idf (stopwords not at all), word vectors are unit length
 * so that no word dominates by its norm, and the corpus' common direction (the first principal
 * component of the document vectors, what every document shares) is removed from documents and
 * queries alike. Corpus words the model lacks (gene, drug and cell names: 38% of SciFact's
 * distinct words) get a vector induced from the words around them ("à la carte", Khodak et al.
 * 2018; wordvec.induction.ts) instead of being dropped. A query is then expanded once by
 * pseudo-relevance feedback in the same space (Rocchio): the vectors of its first few documents are
 * added to it, which pulls in documents on the same topic that share few words with the query.
 * Each step was chosen on SciFact train (docs/retrieval.md).
 */
import { ENGLISH_STOPWORDS, tokenizeWords } from './english.analyzer';
import { createDocumentCatalog, selectTopHits, toIndexedText } from './document.catalog';
import type { Document, SearchEngine, SearchHit } from './search-engine.types';
import type { WordVectors } from './word-vectors';
import { induceWordVectors } from './wordvec.induction';

/** Wordvec parameters. */
export interface WordvecOptions {
  /** Remove the corpus' first principal component from every vector. Default true. */
  removeCommonComponent: boolean;
  /**
   * Fewest documents from which the common component is estimated; below it the "common"
   * direction would be one of the few documents themselves. Default 32.
   */
  minDocumentsForCommonComponent: number;
  /**
   * Induce vectors for corpus words the model lacks from their contexts. Default true; a corpus
   * too small to fit the induction (fewer than 2 x dimensions frequent known words) induces none.
   */
  induceUnknownWords: boolean;
  /** Words on each side that make a word's context for the induction. Default 5. */
  contextWindow: number;
  /** Documents of the first pass whose vectors expand the query; 0 turns the feedback off. Default 3. */
  feedbackDocuments: number;
  /** Weight of the feedback documents' mean against the (unit) query. Default 1. */
  feedbackWeight: number;
}

export function defaultWordvecOptions(): WordvecOptions {
  return {
    removeCommonComponent: true,
    minDocumentsForCommonComponent: 32,
    induceUnknownWords: true,
    contextWindow: 5,
    feedbackDocuments: 3,
    feedbackWeight: 1,
  };
}

const POWER_ITERATIONS = 50;

/**
 * Indexes `title text` of every document with `vectors` (which it keeps a reference to, not a copy).
 * Documents without a single known (or induced) word get no vector and are never returned.
 */
export function createWordvecEngine(
  docs: readonly Document[],
  vectors: WordVectors,
  options: Partial<WordvecOptions> = {},
): SearchEngine {
  const defaults = defaultWordvecOptions();
  const removeCommon = options.removeCommonComponent ?? defaults.removeCommonComponent;
  const minDocs = options.minDocumentsForCommonComponent ?? defaults.minDocumentsForCommonComponent;
  const induce = options.induceUnknownWords ?? defaults.induceUnknownWords;
  const window = options.contextWindow ?? defaults.contextWindow;
  const feedbackDocs = options.feedbackDocuments ?? defaults.feedbackDocuments;
  const feedbackWeight = options.feedbackWeight ?? defaults.feedbackWeight;
  if (!(Number.isInteger(window) && window >= 1)) throw new RangeError(`wordvec: contextWindow must be an integer >= 1, got ${window}`);
  if (!(Number.isInteger(feedbackDocs) && feedbackDocs >= 0)) throw new RangeError(`wordvec: feedbackDocuments must be an integer >= 0, got ${feedbackDocs}`);
  if (!(Number.isFinite(feedbackWeight) && feedbackWeight >= 0)) throw new RangeError(`wordvec: feedbackWeight must be a finite number >= 0, got ${feedbackWeight}`);
  const catalog = createDocumentCatalog(docs, 'wordvec');
  const size = docs.length;
  const dims = vectors.dimensions;
  const lexicon = new Lexicon(vectors);

  // Stopwords become null: they hold positions in a context window but never count.
  const texts = docs.map((doc) => tokenizeWords(toIndexedText(doc)).map((w) => (ENGLISH_STOPWORDS.has(w) ? null : w)));
  if (induce) lexicon.induced = induceWordVectors(texts, dims, (word) => lexicon.modelUnit(word), { window });
  const docWords = texts.map((text) => text.filter((w): w is string => w !== null && lexicon.has(w)));
  const df = new Map<string, number>();
  for (const words of docWords) for (const word of new Set(words)) df.set(word, (df.get(word) ?? 0) + 1);
  // Smoothed idf: a word no document has (possible in a query) weighs most, as the rarest would.
  const idfOf = (word: string): number => Math.log((size + 1) / ((df.get(word) ?? 0) + 1));

  // Float64 like the query (4 MB for 5k documents): mixed precision made the scan measurably slower.
  const matrix = new Float64Array(size * dims);
  const hasVector = new Uint8Array(size);
  const scratch = new Float64Array(dims);
  docWords.forEach((words, d) => {
    if (averageInto(scratch, words, lexicon, idfOf)) {
      matrix.set(scratch, d * dims);
      hasVector[d] = 1;
    }
  });
  const common = removeCommon && size >= minDocs ? firstPrincipalComponent(matrix, hasVector, dims) : null;
  for (let d = 0; d < size; d++) {
    if (!hasVector[d]) continue;
    const row = matrix.subarray(d * dims, (d + 1) * dims);
    scratch.set(row);
    if (common) removeComponent(scratch, common);
    if (normalize(scratch)) row.set(scratch);
    else hasVector[d] = 0;
  }

  // Scratch accumulators reused across calls: search is synchronous, so calls cannot interleave.
  const scores = new Float64Array(size);
  const query = new Float64Array(dims);

  /** Cosine of every document with `query` into `scores`; returns the documents with a positive one. */
  function scoreAll(): number[] {
    const candidates: number[] = [];
    for (let d = 0; d < size; d++) {
      if (!hasVector[d]) continue;
      let dot = 0;
      const base = d * dims;
      for (let k = 0; k < dims; k++) dot += matrix[base + k] * query[k];
      // Cosine of unit vectors; only positive similarities are hits (the engine contract).
      if (dot > 0) {
        scores[d] = dot;
        candidates.push(d);
      }
    }
    return candidates;
  }

  function search(text: string, limit: number): SearchHit[] {
    const words = tokenizeWords(text).filter((w) => !ENGLISH_STOPWORDS.has(w) && lexicon.has(w));
    if (!averageInto(query, words, lexicon, idfOf)) return [];
    if (common) removeComponent(query, common);
    if (!normalize(query)) return [];
    let candidates = scoreAll();
    try {
      if (feedbackDocs > 0 && feedbackWeight > 0 && candidates.length > 0) {
        // Rocchio: query + weight x mean of the first documents' (unit) vectors, then rank again.
        const scale = feedbackWeight / feedbackDocs;
        for (const d of bestDocuments(scores, candidates, feedbackDocs, catalog.idRank)) {
          const base = d * dims;
          for (let k = 0; k < dims; k++) query[k] += scale * matrix[base + k];
        }
        for (const d of candidates) scores[d] = 0;
        candidates = normalize(query) ? scoreAll() : [];
      }
      return selectTopHits(catalog, scores, candidates, limit);
    } finally {
      for (const d of candidates) scores[d] = 0;
    }
  }

  const steps = [
    'tf-idf weighted',
    ...(lexicon.induced.size > 0 ? [`${lexicon.induced.size} words induced from context`] : []),
    ...(common ? ['common component removed'] : []),
    ...(feedbackDocs > 0 && feedbackWeight > 0 ? [`feedback from the first ${feedbackDocs}`] : []),
  ];
  return Object.freeze({
    name: 'wordvec',
    size,
    description: `averaged word vectors (${dims}d, ${steps.join(', ')}), cosine`,
    search,
  });
}

/** The unit vector of every word the engine knows: the model's, else an induced one. */
class Lexicon {
  induced: ReadonlyMap<string, Float64Array> = new Map();
  private readonly norms = new Map<string, number>();

  constructor(private readonly vectors: WordVectors) {}

  has(word: string): boolean {
    return this.vectors.index.has(word) || this.induced.has(word);
  }

  /** Adds `weight` x the word's unit vector to `out`; false when the word has none. */
  addTo(out: Float64Array, word: string, weight: number): boolean {
    const { data, dimensions: dims } = this.vectors;
    const row = this.vectors.index.get(word);
    if (row === undefined) {
      const v = this.induced.get(word);
      if (!v) return false;
      for (let k = 0; k < dims; k++) out[k] += weight * v[k];
      return true;
    }
    const base = row * dims;
    let norm = this.norms.get(word);
    if (norm === undefined) {
      let sum = 0;
      for (let k = 0; k < dims; k++) sum += data[base + k] * data[base + k];
      norm = Math.sqrt(sum);
      this.norms.set(word, norm);
    }
    if (norm === 0) return false;
    const scale = weight / norm;
    for (let k = 0; k < dims; k++) out[k] += scale * data[base + k];
    return true;
  }

  /** The model's own unit vector of `word` (a copy), or null. */
  modelUnit(word: string): Float64Array | null {
    if (!this.vectors.index.has(word)) return null;
    const v = new Float64Array(this.vectors.dimensions);
    return this.addTo(v, word, 1) && normalize(v) ? v : null;
  }
}

/** Writes the idf-weighted sum of the words' unit vectors into `out`; false when nothing was added. */
function averageInto(out: Float64Array, words: readonly string[], lexicon: Lexicon, idfOf: (word: string) => number): boolean {
  out.fill(0);
  let added = false;
  for (const word of words) {
    const weight = idfOf(word);
    if (weight <= 0) continue;
    if (lexicon.addTo(out, word, weight)) added = true;
  }
  return added;
}

/** The `m` best documents of `candidates` by score, ties by id (as the ranking breaks them). */
function bestDocuments(scores: Float64Array, candidates: readonly number[], m: number, idRank: Int32Array): number[] {
  const best: number[] = [];
  const better = (a: number, b: number): boolean => scores[a] > scores[b] || (scores[a] === scores[b] && idRank[a] < idRank[b]);
  for (const d of candidates) {
    if (best.length === m && !better(d, best[m - 1])) continue;
    let i = best.length === m ? m - 1 : best.length;
    best[i] = d;
    while (i > 0 && better(best[i], best[i - 1])) {
      [best[i], best[i - 1]] = [best[i - 1], best[i]];
      i--;
    }
  }
  return best;
}

/** Scales `v` to unit length in place; false when it is (numerically) zero. */
function normalize(v: Float64Array): boolean {
  let sum = 0;
  for (const x of v) sum += x * x;
  const norm = Math.sqrt(sum);
  if (!(norm > 1e-12)) return false;
  for (let k = 0; k < v.length; k++) v[k] /= norm;
  return true;
}

function removeComponent(v: Float64Array, unit: Float64Array): void {
  let dot = 0;
  for (let k = 0; k < v.length; k++) dot += v[k] * unit[k];
  for (let k = 0; k < v.length; k++) v[k] -= dot * unit[k];
}

/**
 * The dominant direction of the (unit-normalised, uncentred) document vectors, by power iteration
 * from a fixed start, so the index is the same on every build. Null when there is no such direction.
 */
function firstPrincipalComponent(matrix: Float64Array, hasVector: Uint8Array, dims: number): Float64Array | null {
  const rows: Float64Array[] = [];
  for (let d = 0; d < hasVector.length; d++) {
    if (!hasVector[d]) continue;
    const row = Float64Array.from(matrix.subarray(d * dims, (d + 1) * dims));
    if (normalize(row)) rows.push(row);
  }
  if (rows.length === 0) return null;
  let u = new Float64Array(dims).fill(1 / Math.sqrt(dims));
  for (let it = 0; it < POWER_ITERATIONS; it++) {
    const next = new Float64Array(dims);
    for (const row of rows) {
      let dot = 0;
      for (let k = 0; k < dims; k++) dot += row[k] * u[k];
      for (let k = 0; k < dims; k++) next[k] += dot * row[k];
    }
    if (!normalize(next)) return null;
    u = next;
  }
  return u;
}
