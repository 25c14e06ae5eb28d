/**
 * A compact inverted index shared by the engines. Keys (terms or n-grams) are interned to
 * integers and postings are stored in compressed-sparse-row form: one offsets array, one flat
 * docs array, one flat tf array. Each distinct word is expanded to its keys once per build
 * (stemming and n-gram slicing dominate indexing otherwise, and words repeat heavily).
 */

/** Postings of key `k` occupy `[offsets[k], offsets[k + 1])` of `docs` and `tfs`. */
export interface InvertedIndex {
  /** Number of documents. */
  readonly size: number;
  /** Key -> key number. */
  readonly keys: ReadonlyMap<string, number>;
  /** Document frequency by key number. */
  readonly df: Int32Array;
  /** Length `keys.size + 1`: start of each key's postings. */
  readonly offsets: Int32Array;
  /** Document numbers; ascending within one key. */
  readonly docs: Int32Array;
  /** Occurrences of the key in the document, parallel to `docs`. */
  readonly tfs: Int32Array;
  /** Keys per document, counting repeats (the document length the engine sees). */
  readonly lengths: Int32Array;
}

/** How an engine turns text into keys: split into words, then expand each word (maybe to none). */
export interface KeyAnalysis {
  readonly wordsOf: (text: string) => readonly string[];
  readonly keysOfWord: (word: string) => readonly string[];
}

/** Keys of `text` in text order, repeats kept; what a query is scored on. */
export function analyzeKeys(analysis: KeyAnalysis, text: string): string[] {
  return analysis.wordsOf(text).flatMap((word) => analysis.keysOfWord(word));
}

/** Indexes the keys of every text, document number `d` being the position in `texts`. */
export function buildInvertedIndex(texts: readonly string[], analysis: KeyAnalysis): InvertedIndex {
  const size = texts.length;
  const keys = new Map<string, number>();
  const keysByWord = new Map<string, Int32Array>();
  const dfByKey: number[] = [];
  // Scratch by key number: the tf within the current document, and which keys it touched.
  let counts = new Int32Array(1024);
  let touched = new Int32Array(1024);
  // Per-document (key, tf) pairs in document order, regrouped by key afterwards. Typed buffers
  // grown by doubling: millions of Array.push calls were a third of the indexing time.
  const pairKeys = new GrowableInt32Array();
  const pairTfs = new GrowableInt32Array();
  const pairStart = new Int32Array(size + 1);
  const lengths = new Int32Array(size);

  for (let d = 0; d < size; d++) {
    let touchedCount = 0;
    let length = 0;
    for (const word of analysis.wordsOf(texts[d])) {
      let ids = keysByWord.get(word);
      if (ids === undefined) {
        ids = Int32Array.from(analysis.keysOfWord(word), (key) => {
          let k = keys.get(key);
          if (k === undefined) {
            k = keys.size;
            keys.set(key, k);
            dfByKey.push(0);
          }
          return k;
        });
        keysByWord.set(word, ids);
        if (keys.size > counts.length) {
          counts = grow(counts, keys.size);
          touched = grow(touched, keys.size);
        }
      }
      length += ids.length;
      for (let i = 0; i < ids.length; i++) if (counts[ids[i]]++ === 0) touched[touchedCount++] = ids[i];
    }
    lengths[d] = length;
    for (let t = 0; t < touchedCount; t++) {
      const k = touched[t];
      pairKeys.push(k);
      pairTfs.push(counts[k]);
      dfByKey[k]++;
      counts[k] = 0;
    }
    pairStart[d + 1] = pairKeys.length;
  }

  const df = Int32Array.from(dfByKey);
  const offsets = new Int32Array(df.length + 1);
  for (let k = 0; k < df.length; k++) offsets[k + 1] = offsets[k] + df[k];
  const cursor = offsets.slice(0, df.length);
  const docs = new Int32Array(pairKeys.length);
  const tfs = new Int32Array(pairKeys.length);
  const pairKeyValues = pairKeys.values;
  const pairTfValues = pairTfs.values;
  for (let d = 0; d < size; d++) {
    for (let j = pairStart[d]; j < pairStart[d + 1]; j++) {
      const position = cursor[pairKeyValues[j]]++;
      docs[position] = d;
      tfs[position] = pairTfValues[j];
    }
  }
  return { size, keys, df, offsets, docs, tfs, lengths };
}

/** A copy of `array` with room for at least `minLength` entries; the new tail is zero. */
function grow(array: Int32Array, minLength: number): Int32Array<ArrayBuffer> {
  const grown = new Int32Array(Math.max(minLength, array.length * 2));
  grown.set(array);
  return grown;
}

/** An append-only Int32Array; `values` is valid up to `length`. */
class GrowableInt32Array {
  values = new Int32Array(1024);
  length = 0;

  push(value: number): void {
    if (this.length === this.values.length) this.values = grow(this.values, this.length + 1);
    this.values[this.length++] = value;
  }
}

/** Occurrence counts of `keys`, in first-occurrence order (so query scoring order is stable). */
export function countKeys(keys: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1);
  return counts;
}
