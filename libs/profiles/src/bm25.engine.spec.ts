import { CorpusError } from './corpus.errors';
import { createBm25Engine, defaultBm25Options } from './bm25.engine';
import type { Document } from './search-engine.types';

// Analyzed (title + text): a = cat cat cat dog (4), b = dog dog bird (3), c = fish fish (2); avgdl = 3.
const corpus: Document[] = [
  { id: 'a', title: 'Cats', text: 'cat cat dog' },
  { id: 'b', title: 'Dogs', text: 'dog bird' },
  { id: 'c', title: 'Fish', text: 'fish' },
];

describe('createBm25Engine', () => {
  it('createBm25Engine - defaults to the Anserini parameters', () => {
    expect(defaultBm25Options()).toEqual({ k1: 0.9, b: 0.4 });
    const engine = createBm25Engine(corpus);
    expect(engine.name).toBe('bm25');
    expect(engine.size).toBe(3);
    expect(engine.description).toBe('BM25 (k1=0.9, b=0.4), English analyzer');
  });

  it('createBm25Engine - matches a hand-computed score', () => {
    // "cat" in a: df = 1, idf = ln(1 + (3 - 1 + 0.5) / (1 + 0.5)) = ln(8/3) = 0.980829
    // tf = 3, dl = 4: 3 * 1.9 / (3 + 0.9 * (0.6 + 0.4 * 4/3)) = 5.7 / 4.02 = 1.417910
    // score = 0.980829 * 1.417910 = 1.390728
    const hits = createBm25Engine(corpus).search('cats', 10);
    expect(hits).toHaveLength(1);
    expect(hits[0].id).toBe('a');
    expect(hits[0].score).toBeCloseTo(1.390728, 6);
  });

  it('createBm25Engine - ranks the shorter document with more occurrences first', () => {
    // "dog": b (tf 2, dl 3) = ln(1.6) * 3.8 / 2.9 = 0.615867; a (tf 1, dl 4) = ln(1.6) * 1.9 / 2.02 = 0.442083
    const hits = createBm25Engine(corpus).search('dog', 10);
    expect(hits.map((h) => h.id)).toEqual(['b', 'a']);
    expect(hits[0].score).toBeCloseTo(0.615867, 6);
    expect(hits[1].score).toBeCloseTo(0.442083, 6);
  });

  it('createBm25Engine - counts a repeated query term once per occurrence', () => {
    const engine = createBm25Engine(corpus);
    const once = engine.search('dog', 10);
    const twice = engine.search('dogs dog', 10);
    expect(twice.map((h) => h.id)).toEqual(once.map((h) => h.id));
    expect(twice[0].score).toBeCloseTo(2 * once[0].score, 12);
  });

  it('createBm25Engine - honours k1 and b', () => {
    // With b = 0 length no longer matters; with k1 = 0 only idf does, so a and b tie on "dog".
    const binary = createBm25Engine(corpus, { k1: 0 }).search('dog', 10);
    expect(binary.map((h) => h.id)).toEqual(['a', 'b']);
    expect(binary[0].score).toBeCloseTo(Math.log(1.6), 12);
    expect(createBm25Engine(corpus, { b: 0.75 }).description).toBe('BM25 (k1=0.9, b=0.75), English analyzer');
    expect(createBm25Engine(corpus, { k1: undefined }).description).toBe('BM25 (k1=0.9, b=0.4), English analyzer');
  });

  it('createBm25Engine - returns nothing for an empty, stopword-only or unknown query', () => {
    const engine = createBm25Engine(corpus);
    expect(engine.search('', 10)).toEqual([]);
    expect(engine.search('the of and', 10)).toEqual([]);
    expect(engine.search('zebra', 10)).toEqual([]);
  });

  it('createBm25Engine - cuts at the limit and treats a non-positive limit as none', () => {
    const engine = createBm25Engine(corpus);
    expect(engine.search('dog', 1).map((h) => h.id)).toEqual(['b']);
    expect(engine.search('dog', 0)).toEqual([]);
    expect(engine.search('dog', -5)).toEqual([]);
    expect(engine.search('dog', Number.NaN)).toEqual([]);
    expect(engine.search('dog', Number.POSITIVE_INFINITY)).toHaveLength(2);
  });

  it('createBm25Engine - breaks ties by id ascending, whatever the indexing order', () => {
    const twins: Document[] = ['m', 'b', 'z', 'a'].map((id) => ({ id, title: '', text: 'same words here' }));
    const engine = createBm25Engine(twins);
    expect(engine.search('words', 10).map((h) => h.id)).toEqual(['a', 'b', 'm', 'z']);
    expect(engine.search('words', 2).map((h) => h.id)).toEqual(['a', 'b']);
  });

  it('createBm25Engine - gives identical hits for the same corpus in another order', () => {
    const forward = createBm25Engine(corpus).search('cat dog fish', 10);
    const backward = createBm25Engine([...corpus].reverse()).search('cat dog fish', 10);
    expect(backward).toEqual(forward);
    expect(forward.map((h) => h.id)).toEqual(['a', 'c', 'b']);
  });

  it('createBm25Engine - searches an empty corpus without failing', () => {
    const engine = createBm25Engine([]);
    expect(engine.size).toBe(0);
    expect(engine.search('anything', 10)).toEqual([]);
  });

  it('createBm25Engine - rejects duplicate ids and out-of-range parameters', () => {
    expect(() => createBm25Engine([corpus[0], corpus[0]])).toThrow(CorpusError);
    expect(() => createBm25Engine(corpus, { b: 1.5 })).toThrow(RangeError);
    expect(() => createBm25Engine(corpus, { k1: -1 })).toThrow(RangeError);
  });
});
