import { analyzeKeys, buildInvertedIndex, countKeys, type KeyAnalysis } from './inverted.index';

// Words split on spaces; a word expands to itself, except "x" (dropped) and "ab" (two keys).
const analysis: KeyAnalysis = {
  wordsOf: (text) => text.split(' ').filter(Boolean),
  keysOfWord: (word) => (word === 'x' ? [] : word === 'ab' ? ['a', 'b'] : [word]),
};

/** The (doc, tf) postings of `key`. */
function postingsOf(index: ReturnType<typeof buildInvertedIndex>, key: string): [number, number][] {
  const k = index.keys.get(key);
  if (k === undefined) return [];
  const out: [number, number][] = [];
  for (let i = index.offsets[k]; i < index.offsets[k + 1]; i++) out.push([index.docs[i], index.tfs[i]]);
  return out;
}

describe('buildInvertedIndex', () => {
  it('buildInvertedIndex - stores per-key postings with term frequencies, docs ascending', () => {
    const index = buildInvertedIndex(['a b a', 'x c', 'ab a', ''], analysis);
    expect(index.size).toBe(4);
    expect(postingsOf(index, 'a')).toEqual([
      [0, 2],
      [2, 2],
    ]);
    expect(postingsOf(index, 'b')).toEqual([
      [0, 1],
      [2, 1],
    ]);
    expect(postingsOf(index, 'c')).toEqual([[1, 1]]);
    expect(index.keys.has('x')).toBe(false);
    expect(Array.from(index.df)).toEqual([2, 2, 1]);
  });

  it('buildInvertedIndex - counts document length in keys, not words', () => {
    const index = buildInvertedIndex(['a b a', 'x c', 'ab a', ''], analysis);
    expect(Array.from(index.lengths)).toEqual([3, 1, 3, 0]);
  });

  it('buildInvertedIndex - grows its scratch space past the initial key capacity', () => {
    const words = Array.from({ length: 3000 }, (_, i) => `w${i}`);
    const index = buildInvertedIndex([words.join(' '), 'w2999 w0'], analysis);
    expect(index.keys.size).toBe(3000);
    expect(postingsOf(index, 'w2999')).toEqual([
      [0, 1],
      [1, 1],
    ]);
    expect(postingsOf(index, 'w1500')).toEqual([[0, 1]]);
  });
});

describe('analyzeKeys', () => {
  it('analyzeKeys - expands words in order and countKeys keeps first-occurrence order', () => {
    const keys = analyzeKeys(analysis, 'c ab x a');
    expect(keys).toEqual(['c', 'a', 'b', 'a']);
    expect([...countKeys(keys)]).toEqual([
      ['c', 1],
      ['a', 2],
      ['b', 1],
    ]);
  });
});
