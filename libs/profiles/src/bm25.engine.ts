/**
 * Okapi BM25 over the English analyzer, the Lucene/Anserini formulation, so that its SciFact
 * figures can be compared with published baselines. Postings are typed arrays and per-document
 * length normalisation is precomputed, which keeps a query on a 5k-document corpus well under 1 ms.
 */
import { toEnglishTerm, toEnglishWords } from './english.analyzer';
import { createDocumentCatalog, selectTopHits, toIndexedText } from './document.catalog';
import { analyzeKeys, buildInvertedIndex, countKeys, type KeyAnalysis } from './inverted.index';
import type { Document, SearchEngine, SearchHit } from './search-engine.types';

/** BM25 free parameters. */
export interface Bm25Options {
  /** Term-frequency saturation; 0 turns BM25 into a binary model. Default 0.9. */
  k1: number;
  /** Length normalisation strength, 0..1. Default 0.4. */
  b: number;
}

/** Anserini's defaults, the usual BEIR baseline (k1=0.9, b=0.4). */
export function defaultBm25Options(): Bm25Options {
  return { k1: 0.9, b: 0.4 };
}

/** `analyzeEnglish`, split into its word step and its per-word step so the index can memoise stems. */
const ENGLISH_KEYS: KeyAnalysis = Object.freeze({
  wordsOf: toEnglishWords,
  keysOfWord: (word: string): readonly string[] => {
    const term = toEnglishTerm(word);
    return term === null ? [] : [term];
  },
});

/**
 * Indexes `title text` of every document. Throws a RangeError for parameters outside their
 * meaningful range and a CorpusError for duplicate ids.
 */
export function createBm25Engine(docs: readonly Document[], options: Partial<Bm25Options> = {}): SearchEngine {
  // `??` rather than a spread, so an explicit `undefined` still means "the default".
  const defaults = defaultBm25Options();
  const k1 = options.k1 ?? defaults.k1;
  const b = options.b ?? defaults.b;
  if (!(Number.isFinite(k1) && k1 >= 0)) throw new RangeError(`bm25: k1 must be a finite number >= 0, got ${k1}`);
  if (!(Number.isFinite(b) && b >= 0 && b <= 1)) throw new RangeError(`bm25: b must be within [0, 1], got ${b}`);

  const catalog = createDocumentCatalog(docs, 'bm25');
  const size = docs.length;
  const index = buildInvertedIndex(docs.map(toIndexedText), ENGLISH_KEYS);
  const { keys, offsets, docs: postingDocs, tfs } = index;

  // Lucene's idf, ln(1 + (N - df + 0.5) / (df + 0.5)), always positive, unlike the classic Robertson idf.
  const idf = new Float64Array(index.df.length);
  index.df.forEach((df, k) => (idf[k] = Math.log(1 + (size - df + 0.5) / (df + 0.5))));
  // The denominator's length part, k1 * (1 - b + b * dl / avgdl), depends only on the document.
  // Lengths are exact: Lucene's one-byte norm quantisation is not reproduced, and the reference
  // figures were computed without it.
  let totalLength = 0;
  for (const length of index.lengths) totalLength += length;
  const avgLength = totalLength > 0 ? totalLength / size : 1;
  const lengthNorm = new Float64Array(size);
  for (let d = 0; d < size; d++) lengthNorm[d] = k1 * (1 - b + (b * index.lengths[d]) / avgLength);

  // Scratch accumulator reused across calls: search is synchronous, so calls cannot interleave.
  const scores = new Float64Array(size);

  function search(text: string, limit: number): SearchHit[] {
    const touched: number[] = [];
    for (const [term, qtf] of countKeys(analyzeKeys(ENGLISH_KEYS, text))) {
      const k = keys.get(term);
      if (k === undefined) continue;
      // A term repeated in the query counts once per occurrence, as in Anserini's bag-of-words query.
      const weight = qtf * idf[k] * (k1 + 1);
      for (let i = offsets[k]; i < offsets[k + 1]; i++) {
        const d = postingDocs[i];
        const tf = tfs[i];
        // Every contribution is > 0, so a zero score means "not touched yet".
        if (scores[d] === 0) touched.push(d);
        scores[d] += (weight * tf) / (tf + lengthNorm[d]);
      }
    }
    try {
      return selectTopHits(catalog, scores, touched, limit);
    } finally {
      for (const d of touched) scores[d] = 0;
    }
  }

  return Object.freeze({
    name: 'bm25',
    size,
    description: `BM25 (k1=${k1}, b=${b}), English analyzer`,
    search,
  });
}
