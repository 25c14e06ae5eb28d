/**
 * Vectors for the corpus words a pretrained model lacks, induced from the words around them: the
 * "à la carte" embedding of Khodak et al. (2018). A word's context vector is the mean, over its
 * occurrences, of the sum of the (unit) model vectors of the known words within `window` words of
 * it. A linear map A, fitted by least squares on the corpus words the model does know (their
 * context vector -> their own vector), then turns the context vector of an unknown word into a
 * vector for it. On SciFact 38% of the distinct words (numbers, and gene, drug and cell names:
 * much of the discriminating vocabulary) have no GloVe vector; induced ones let the averages see
 * them.
 *
 * Pure and deterministic: tokens and vectors in, vectors out, the same on every build.
 */

/** Induction parameters. */
export interface InductionOptions {
  /** Words on each side that count as context. */
  window: number;
  /** Fewest occurrences of a known word for it to take part in the fit (its context vector is noisy below). */
  minOccurrencesToFit: number;
  /**
   * Fewest known words the fit needs, as a multiple of the dimensions: below it the map would be
   * fitted to a handful of words (a small corpus), and nothing is induced.
   */
  minFitWordsPerDimension: number;
  /** Ridge strength, relative to the number of fitted words; keeps the map well conditioned. */
  ridge: number;
}

export function defaultInductionOptions(): InductionOptions {
  return { window: 5, minOccurrencesToFit: 5, minFitWordsPerDimension: 2, ridge: 1e-3 };
}

/**
 * Induced unit vectors for the words of `texts` (each a word sequence, stopwords already `null`)
 * that `unitVectorOf` does not know. Numbers and one-character words are left alone: their
 * contexts say nothing about them. A word whose contexts hold no known word gets no vector.
 *
 * @param unitVectorOf the model's unit vector of a word, or null when the model lacks it
 */
export function induceWordVectors(
  texts: readonly (readonly (string | null)[])[],
  dims: number,
  unitVectorOf: (word: string) => Float64Array | null,
  options: Partial<InductionOptions> = {},
): Map<string, Float64Array> {
  const { window, minOccurrencesToFit, minFitWordsPerDimension, ridge } = { ...defaultInductionOptions(), ...options };
  // Word types (non-stopwords) get numbers, and each text becomes their sequence (-1: a stopword).
  const typeOf = new Map<string, number>();
  const words: string[] = [];
  const sequences = texts.map((text) =>
    Int32Array.from(text, (word) => {
      if (word === null) return -1;
      let t = typeOf.get(word);
      if (t === undefined) {
        t = words.length;
        typeOf.set(word, t);
        words.push(word);
      }
      return t;
    }),
  );
  const types = words.length;
  // The model's unit vector of every type, zeros for types it lacks and for the stopword row (the last).
  const known = new Uint8Array(types);
  const units = new Float64Array((types + 1) * dims);
  for (let t = 0; t < types; t++) {
    const v = unitVectorOf(words[t]);
    if (!v) continue;
    known[t] = 1;
    units.set(v, t * dims);
  }
  const rowOf = (t: number): number => (t < 0 ? types : t) * dims;
  const counts = new Float64Array(types);
  const contexts = new Float64Array(types * dims);
  // Window sums through prefix sums of the known words' vectors: one pass per text, whatever the window.
  let prefix = new Float64Array(0);
  for (const sequence of sequences) {
    const n = sequence.length;
    if (prefix.length < (n + 1) * dims) prefix = new Float64Array((n + 1) * dims);
    prefix.fill(0, 0, dims);
    for (let i = 0; i < n; i++) {
      const own = rowOf(sequence[i]);
      const from = i * dims;
      const to = from + dims;
      for (let k = 0; k < dims; k++) prefix[to + k] = prefix[from + k] + units[own + k];
    }
    for (let i = 0; i < n; i++) {
      const t = sequence[i];
      if (t < 0) continue;
      const own = t * dims;
      const lo = Math.max(0, i - window) * dims;
      const hi = (Math.min(n - 1, i + window) + 1) * dims;
      for (let k = 0; k < dims; k++) contexts[own + k] += prefix[hi + k] - prefix[lo + k] - units[own + k];
      counts[t]++;
    }
  }

  // Least squares, weighted by log(occurrences): (XᵀWX + λI) B = XᵀWY, with A = Bᵀ.
  const xtx = new Float64Array(dims * dims);
  const xty = new Float64Array(dims * dims);
  const x = new Float64Array(dims);
  let fitted = 0;
  for (let t = 0; t < types; t++) {
    if (!known[t] || counts[t] < minOccurrencesToFit) continue;
    meanContext(contexts, counts, t, dims, x);
    const weight = Math.log(counts[t]);
    const y = t * dims;
    for (let a = 0; a < dims; a++) {
      const xa = x[a] * weight;
      if (xa === 0) continue;
      const row = a * dims;
      for (let b = a; b < dims; b++) xtx[row + b] += xa * x[b];
      for (let b = 0; b < dims; b++) xty[row + b] += xa * units[y + b];
    }
    fitted++;
  }
  const induced = new Map<string, Float64Array>();
  if (fitted === 0 || fitted < minFitWordsPerDimension * dims) return induced;
  for (let a = 0; a < dims; a++) for (let b = 0; b < a; b++) xtx[a * dims + b] = xtx[b * dims + a];
  for (let a = 0; a < dims; a++) xtx[a * dims + a] += ridge * fitted;
  const map = solveSymmetric(xtx, xty, dims);
  if (!map) return induced;

  for (let t = 0; t < types; t++) {
    if (known[t] || counts[t] === 0 || !isInducible(words[t])) continue;
    meanContext(contexts, counts, t, dims, x);
    const v = new Float64Array(dims);
    for (let a = 0; a < dims; a++) {
      const xa = x[a];
      if (xa === 0) continue;
      const row = a * dims;
      for (let b = 0; b < dims; b++) v[b] += xa * map[row + b];
    }
    let sum = 0;
    for (let k = 0; k < dims; k++) sum += v[k] * v[k];
    const norm = Math.sqrt(sum);
    if (!(norm > 1e-12)) continue;
    for (let k = 0; k < dims; k++) v[k] /= norm;
    induced.set(words[t], v);
  }
  return induced;
}

const DIGITS = /^\p{N}+$/u;

/** Numbers and one-character words (a stray letter, a Greek symbol) have no meaning of their own to induce. */
function isInducible(word: string): boolean {
  return word.length >= 2 && !DIGITS.test(word);
}

function meanContext(contexts: Float64Array, counts: Float64Array, t: number, dims: number, out: Float64Array): void {
  const row = t * dims;
  for (let k = 0; k < dims; k++) out[k] = contexts[row + k] / counts[t];
}

/**
 * Solves S X = R for a symmetric positive definite `s` (dims x dims, row-major) and `dims`
 * right-hand sides `r`, by Cholesky decomposition. Null when `s` is not positive definite.
 */
export function solveSymmetric(s: Float64Array, r: Float64Array, dims: number): Float64Array | null {
  const l = new Float64Array(dims * dims);
  for (let i = 0; i < dims; i++) {
    for (let j = 0; j <= i; j++) {
      let sum = s[i * dims + j];
      for (let k = 0; k < j; k++) sum -= l[i * dims + k] * l[j * dims + k];
      if (i === j) {
        if (!(sum > 0)) return null;
        l[i * dims + i] = Math.sqrt(sum);
      } else {
        l[i * dims + j] = sum / l[j * dims + j];
      }
    }
  }
  const out = new Float64Array(dims * dims);
  const column = new Float64Array(dims);
  for (let c = 0; c < dims; c++) {
    // Forward (L z = r_c), then backward (Lᵀ x = z) substitution, column by column.
    for (let i = 0; i < dims; i++) {
      let sum = r[i * dims + c];
      for (let k = 0; k < i; k++) sum -= l[i * dims + k] * column[k];
      column[i] = sum / l[i * dims + i];
    }
    for (let i = dims - 1; i >= 0; i--) {
      let sum = column[i];
      for (let k = i + 1; k < dims; k++) sum -= l[k * dims + i] * out[k * dims + c];
      out[i * dims + c] = sum / l[i * dims + i];
    }
  }
  return out;
}
