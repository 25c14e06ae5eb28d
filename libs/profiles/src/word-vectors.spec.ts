import { CorpusError } from './corpus.errors';
import { createWordVectors, parseWinkEmbeddings } from './word-vectors';

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

/** The wink layout: a header, a word list (which contains the word "vectors"), then the vectors with norm and rank appended. */
const WINK = JSON.stringify({
  precision: 8,
  l2NormIndex: 2,
  wordIndex: 3,
  size: 4,
  dimensions: 2,
  words: ['the', 'vectors', '"', 'β-cell'],
  vectors: {
    the: [0.5, -1.25, 1.35, 0],
    vectors: [1e-3, 2.5e2, 250, 1],
    '"': [0, 3, 3, 2],
    'β-cell': [0.12345678, -0.5, 0.51, 3],
  },
  unkVector: [0, 0, -1],
});

describe('parseWinkEmbeddings', () => {
  it('parseWinkEmbeddings - keeps the first `dimensions` numbers of each word, escapes and UTF-8 included', () => {
    const vectors = parseWinkEmbeddings(bytes(WINK));
    expect(vectors.dimensions).toBe(2);
    expect([...vectors.index.keys()]).toEqual(['the', 'vectors', '"', 'β-cell']);
    expect(vectors.data.length).toBe(8);
    const row = (word: string) => Array.from(vectors.data.subarray(vectors.index.get(word)! * 2, vectors.index.get(word)! * 2 + 2));
    expect(row('the')).toEqual([0.5, -1.25]);
    expect(row('vectors')).toEqual([Math.fround(0.001), 250]);
    expect(row('"')).toEqual([0, 3]);
    expect(row('β-cell')).toEqual([Math.fround(0.12345678), -0.5]);
  });

  it('parseWinkEmbeddings - reads numbers exactly as JSON.parse does, to float32 precision', () => {
    const numbers = ['0.1', '-0.30029', '1.2345678', '9.99999', '-2.95153011', '1E-7', '123456789.123', '0', '-0.0001'];
    const text = JSON.stringify({ dimensions: numbers.length, vectors: { w: numbers.map(Number) } }).replace(/\[[^\]]*\]/, `[${numbers.join(',')}]`);
    const vectors = parseWinkEmbeddings(bytes(text));
    expect(Array.from(vectors.data)).toEqual(numbers.map((n) => Math.fround(Number(n))));
  });

  it('parseWinkEmbeddings - tolerates whitespace around tokens', () => {
    const vectors = parseWinkEmbeddings(bytes('{ "dimensions" : 2 ,\n "vectors" : {\n "a" : [ 1 , 2 , 3 ] ,\n "b":[4,5]\n }\n}'));
    expect(Array.from(vectors.data)).toEqual([1, 2, 4, 5]);
  });

  it('parseWinkEmbeddings - accepts an empty vector object', () => {
    expect(parseWinkEmbeddings(bytes('{"dimensions":3,"vectors":{}}')).index.size).toBe(0);
  });

  it('parseWinkEmbeddings - names the problem and its byte offset', () => {
    expect(() => parseWinkEmbeddings(bytes('{"vectors":{}}'), 'model.json')).toThrow(/model\.json: no "dimensions" field/);
    expect(() => parseWinkEmbeddings(bytes('{"dimensions":2}'))).toThrow(/no "vectors" object/);
    expect(() => parseWinkEmbeddings(bytes('{"dimensions":2,"vectors":{"a":[1]}}'))).toThrow(/"a" has 1 numbers, expected at least 2/);
    expect(() => parseWinkEmbeddings(bytes('{"dimensions":2,"vectors":{"a":[1,x]}}'))).toThrow(/expected a number in the vector of "a" at byte \d+/);
    expect(() => parseWinkEmbeddings(bytes('{"dimensions":1,"vectors":{"a":[1] "b":[2]}}'))).toThrow(CorpusError);
  });
});

describe('createWordVectors', () => {
  it('createWordVectors - lays rows out in order', () => {
    const vectors = createWordVectors(2, [
      ['a', [1, 2]],
      ['b', [3, 4]],
    ]);
    expect(vectors.index.get('b')).toBe(1);
    expect(Array.from(vectors.data)).toEqual([1, 2, 3, 4]);
  });

  it('createWordVectors - rejects a vector of the wrong length and a repeated word', () => {
    expect(() => createWordVectors(2, [['a', [1]]])).toThrow(RangeError);
    expect(() => createWordVectors(1, [['a', [1]], ['a', [2]]])).toThrow(/duplicate word "a"/);
  });
});
