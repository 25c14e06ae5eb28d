import type { Document } from './search-engine.types';
import { createWordVectors } from './word-vectors';
import { createWordvecEngine, defaultWordvecOptions } from './wordvec.engine';

// Three-dimensional toy vectors: axis 0 is "feline", axis 1 "canine", axis 2 "avian".
const vectors = createWordVectors(3, [
  ['cat', [2, 0, 0]], // not unit length on purpose: word vectors are normalised before averaging
  ['kitten', [0.8, 0.6, 0]],
  ['dog', [0, 1, 0]],
  ['puppy', [0.1, 0.9, 0]],
  ['bird', [0, 0, 1]],
  ['the', [1, 1, 1]],
]);

const noCommon = { removeCommonComponent: false };

describe('createWordvecEngine', () => {
  it('createWordvecEngine - finds a document by meaning when no word is shared', () => {
    const engine = createWordvecEngine(
      [
        { id: 'pets', title: 'Dogs', text: 'dog dog puppy' },
        { id: 'cats', title: 'Cats', text: 'cat' },
      ],
      vectors,
      noCommon,
    );
    expect(engine.search('kitten', 2).map((h) => h.id)).toEqual(['cats', 'pets']);
    expect(engine.search('puppy', 1).map((h) => h.id)).toEqual(['pets']);
  });

  it('createWordvecEngine - averages unit word vectors weighted by idf, and scores by cosine', () => {
    const docs: Document[] = [
      { id: 'a', title: '', text: 'cat' },
      { id: 'b', title: '', text: 'dog' },
      { id: 'c', title: '', text: 'cat bird' },
    ];
    // N = 3; idf = ln((N + 1) / (df + 1)): cat (df 2) ln(4/3), bird (df 1) ln 2.
    // c = ln(4/3) * [1,0,0] + ln 2 * [0,0,1]; its cosine with the query "cat" ([1,0,0]) is
    // ln(4/3) / |c|. "b" is orthogonal to "cat": a zero cosine is not a hit.
    const catIdf = Math.log(4 / 3);
    const birdIdf = Math.log(2);
    const hits = createWordvecEngine(docs, vectors, noCommon).search('cat', 10);
    expect(hits.map((h) => h.id)).toEqual(['a', 'c']);
    expect(hits[0].score).toBeCloseTo(1, 6);
    expect(hits[1].score).toBeCloseTo(catIdf / Math.hypot(catIdf, birdIdf), 6);
  });

  it('createWordvecEngine - ignores stopwords and unknown words, and returns nothing for a query without known words', () => {
    const engine = createWordvecEngine(
      [
        { id: 'a', title: 'The cat', text: 'the the the' },
        { id: 'b', title: 'A bird', text: 'zyzzyva' },
      ],
      vectors,
      noCommon,
    );
    // "the" has a vector but is a stopword: "a" is only "cat", so "bird" is orthogonal to it.
    expect(engine.search('bird', 5).map((h) => h.id)).toEqual(['b']);
    expect(engine.search('the of zyzzyx', 5)).toEqual([]);
    expect(engine.search('', 5)).toEqual([]);
  });

  it('createWordvecEngine - never returns a document without a known word', () => {
    const engine = createWordvecEngine([{ id: 'x', title: '', text: 'qwerty uiop' }, { id: 'y', title: '', text: 'cat' }], vectors, noCommon);
    expect(engine.search('cat kitten dog', 5).map((h) => h.id)).toEqual(['y']);
  });

  it('createWordvecEngine - breaks ties by id ascending and honours the limit', () => {
    const engine = createWordvecEngine(
      [
        { id: 'b2', title: '', text: 'cat' },
        { id: 'a1', title: '', text: 'cat' },
        { id: 'c3', title: '', text: 'kitten' },
      ],
      vectors,
      noCommon,
    );
    expect(engine.search('cat', 10).map((h) => h.id)).toEqual(['a1', 'b2', 'c3']);
    expect(engine.search('cat', 1).map((h) => h.id)).toEqual(['a1']);
    expect(engine.search('cat', 0)).toEqual([]);
  });

  it('createWordvecEngine - removes the common component only from a corpus large enough to estimate it', () => {
    expect(defaultWordvecOptions()).toEqual({ removeCommonComponent: true, minDocumentsForCommonComponent: 32 });
    const small = createWordvecEngine([{ id: 'a', title: '', text: 'cat' }], vectors);
    expect(small.description).toBe('averaged word vectors (3d, tf-idf weighted), cosine');
    // 40 documents, mostly feline: the shared feline direction is removed, so what separates the
    // documents (canine vs avian) decides the ranking of a query that mixes all three.
    const docs: Document[] = Array.from({ length: 40 }, (_, i) => ({
      id: `d${String(i).padStart(2, '0')}`,
      title: '',
      text: i === 0 ? 'cat cat cat cat dog' : i === 1 ? 'cat cat cat cat bird' : 'cat',
    }));
    const large = createWordvecEngine(docs, vectors);
    expect(large.name).toBe('wordvec');
    expect(large.size).toBe(40);
    expect(large.description).toBe('averaged word vectors (3d, tf-idf weighted, common component removed), cosine');
    expect(large.search('puppy dog', 1)[0].id).toBe('d00');
    expect(large.search('bird', 1)[0].id).toBe('d01');
  });

  it('createWordvecEngine - rejects duplicate document ids', () => {
    expect(() => createWordvecEngine([{ id: 'a', title: '', text: 'cat' }, { id: 'a', title: '', text: 'dog' }], vectors)).toThrow(/duplicate document id/);
  });
});
