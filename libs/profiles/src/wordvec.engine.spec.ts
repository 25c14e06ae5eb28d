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

// The averaging alone: no common component, no induction, no feedback (each is tested on its own).
const noCommon = { removeCommonComponent: false, induceUnknownWords: false, feedbackDocuments: 0 };

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
    expect(defaultWordvecOptions()).toEqual({
      removeCommonComponent: true,
      minDocumentsForCommonComponent: 32,
      induceUnknownWords: true,
      contextWindow: 5,
      feedbackDocuments: 3,
      feedbackWeight: 1,
    });
    const small = createWordvecEngine([{ id: 'a', title: '', text: 'cat' }], vectors, { feedbackDocuments: 0 });
    expect(small.description).toBe('averaged word vectors (3d, tf-idf weighted), cosine');
    // 40 documents, mostly feline: the shared feline direction is removed, so what separates the
    // documents (canine vs avian) decides the ranking of a query that mixes all three.
    const docs: Document[] = Array.from({ length: 40 }, (_, i) => ({
      id: `d${String(i).padStart(2, '0')}`,
      title: '',
      text: i === 0 ? 'cat cat cat cat dog' : i === 1 ? 'cat cat cat cat bird' : 'cat',
    }));
    const large = createWordvecEngine(docs, vectors, { feedbackDocuments: 0 });
    expect(large.name).toBe('wordvec');
    expect(large.size).toBe(40);
    expect(large.description).toBe('averaged word vectors (3d, tf-idf weighted, common component removed), cosine');
    expect(large.search('puppy dog', 1)[0].id).toBe('d00');
    expect(large.search('bird', 1)[0].id).toBe('d01');
  });

  it('createWordvecEngine - expands the query with its first documents (pseudo-relevance feedback)', () => {
    const docs: Document[] = [
      { id: 'a', title: '', text: 'cat bird' },
      { id: 'b', title: '', text: 'bird' },
      { id: 'c', title: '', text: 'dog' },
    ];
    // "b" is orthogonal to the query "cat"; "a", the first document, shares its avian half with it.
    expect(createWordvecEngine(docs, vectors, noCommon).search('cat', 10).map((h) => h.id)).toEqual(['a']);
    const feedback = createWordvecEngine(docs, vectors, { ...noCommon, feedbackDocuments: 1 });
    expect(feedback.description).toBe('averaged word vectors (3d, tf-idf weighted, feedback from the first 1), cosine');
    const hits = feedback.search('cat', 10);
    expect(hits.map((h) => h.id)).toEqual(['a', 'b']);
    // The expanded query is cat + a (both unit): its cosine with "a" is (cos(cat, a) + 1) / |cat + a|.
    const catIdf = Math.log(4 / 2);
    const birdIdf = Math.log(4 / 3);
    const cosCatA = catIdf / Math.hypot(catIdf, birdIdf);
    expect(hits[0].score).toBeCloseTo((cosCatA + 1) / Math.sqrt(2 + 2 * cosCatA), 6);
    expect(createWordvecEngine(docs, vectors, { ...noCommon, feedbackDocuments: 1, feedbackWeight: 0 }).search('cat', 10).map((h) => h.id)).toEqual(['a']);
    expect(() => createWordvecEngine(docs, vectors, { feedbackDocuments: 1.5 })).toThrow(/feedbackDocuments/);
    expect(() => createWordvecEngine(docs, vectors, { feedbackWeight: -1 })).toThrow(/feedbackWeight/);
    expect(() => createWordvecEngine(docs, vectors, { contextWindow: 0 })).toThrow(/contextWindow/);
  });

  it('createWordvecEngine - gives a word the model lacks the meaning of the words around it', () => {
    // Nine known words, three per axis, each seen often enough to fit the induction; "moggy" is
    // unknown to the model and only ever written among feline words.
    const toy = createWordVectors(3, [
      ['cat', [1, 0, 0]], ['kitten', [0.9, 0.1, 0]], ['purr', [0.95, 0, 0.05]],
      ['dog', [0, 1, 0]], ['puppy', [0.1, 0.9, 0]], ['bark', [0, 0.95, 0.05]],
      ['bird', [0, 0, 1]], ['chick', [0, 0.1, 0.9]], ['tweet', [0.05, 0, 0.95]],
    ]);
    const docs: Document[] = [];
    for (let i = 0; i < 6; i++) {
      docs.push({ id: `f${i}`, title: '', text: i % 2 === 0 ? 'cat kitten purr moggy' : 'purr cat kitten' });
      docs.push({ id: `c${i}`, title: '', text: 'dog puppy bark' });
      docs.push({ id: `a${i}`, title: '', text: 'bird chick tweet' });
    }
    docs.push({ id: 'only-moggy', title: 'Moggy', text: 'moggy moggy' });
    const options = { removeCommonComponent: false, feedbackDocuments: 0 };
    const engine = createWordvecEngine(docs, toy, options);
    expect(engine.description).toBe('averaged word vectors (3d, tf-idf weighted, 1 words induced from context), cosine');
    // The document made of the unknown word alone ranks with the feline documents for a feline
    // query, ahead of every canine and avian one, and behind every canine one for a canine query.
    const rankOf = (query: string, id: string): number => engine.search(query, 50).findIndex((h) => h.id === id);
    const others = docs.filter((d) => !d.id.startsWith('f') && d.id !== 'only-moggy').map((d) => d.id);
    for (const id of others) expect(rankOf('kitten', 'only-moggy')).toBeLessThan(rankOf('kitten', id));
    for (const id of others.filter((d) => d.startsWith('c'))) expect(rankOf('puppy', 'only-moggy')).toBeGreaterThan(rankOf('puppy', id));
    expect(engine.search('moggy', 1)[0].id).toBe('only-moggy');
    // Without the induction, the word is unknown: its document has no vector at all.
    const plain = createWordvecEngine(docs, toy, { ...options, induceUnknownWords: false });
    expect(plain.search('kitten', 50).map((h) => h.id)).not.toContain('only-moggy');
    expect(plain.search('moggy', 5)).toEqual([]);
  });

  it('createWordvecEngine - rejects duplicate document ids', () => {
    expect(() => createWordvecEngine([{ id: 'a', title: '', text: 'cat' }, { id: 'a', title: '', text: 'dog' }], vectors)).toThrow(/duplicate document id/);
  });
});
