import { createBm25Engine } from './bm25.engine';
import type { Document } from './search-engine.types';
import { createTrigramEngine, defaultTrigramOptions, toCharNgrams, toWordNgrams } from './trigram.engine';

const corpus: Document[] = [
  { id: 'stem', title: 'Porter stemmer', text: 'The stemming algorithm reduces words to their stems.' },
  { id: 'rrf', title: 'Reciprocal rank fusion', text: 'Fusion combines ranked lists by summing reciprocal ranks.' },
  { id: 'ack', title: 'Acknowledgement', text: 'A JetStream consumer acknowledges each delivered message.' },
  { id: 'kv', title: 'Key-value store', text: 'Buckets keep the latest value per key.' },
];

describe('toWordNgrams', () => {
  it('toWordNgrams - pads the word with spaces on both sides', () => {
    expect(toWordNgrams('cat', 3)).toEqual([' ca', 'cat', 'at ']);
  });

  it('toWordNgrams - keeps a padded word shorter than n as one gram', () => {
    expect(toWordNgrams('a', 3)).toEqual([' a ']);
    expect(toWordNgrams('ab', 5)).toEqual([' ab ']);
  });

  it('toWordNgrams - counts characters outside the BMP as one character', () => {
    expect(toWordNgrams('𝔸b', 2)).toEqual([' 𝔸', '𝔸b', 'b ']);
  });

  it('toCharNgrams - lowercases, splits on non-alphanumerics and keeps stopwords', () => {
    expect(toCharNgrams('The-Cat', 3)).toEqual([' th', 'the', 'he ', ' ca', 'cat', 'at ']);
  });
});

describe('createTrigramEngine', () => {
  it('createTrigramEngine - describes itself with its gram length', () => {
    expect(defaultTrigramOptions()).toEqual({ n: 3 });
    const engine = createTrigramEngine(corpus);
    expect(engine.name).toBe('trigram');
    expect(engine.size).toBe(4);
    expect(engine.description).toBe('char 3-gram TF-IDF cosine (sublinear tf, words padded with spaces)');
    expect(createTrigramEngine(corpus, { n: 4 }).description).toContain('char 4-gram');
  });

  it('createTrigramEngine - finds the right document first despite typos', () => {
    const engine = createTrigramEngine(corpus);
    expect(engine.search('reciprocl rnak fusoin', 3)[0].id).toBe('rrf');
    expect(engine.search('acknowlegment', 3)[0].id).toBe('ack');
    expect(engine.search('porter stemer', 3)[0].id).toBe('stem');
    // The stemmed word lens cannot match the misspelling at all; that is why both lenses exist.
    expect(createBm25Engine(corpus).search('acknowlegment', 3)).toEqual([]);
  });

  it('createTrigramEngine - matches a hand-computed cosine with smoothed idf', () => {
    // n = 2, N = 2: "cat" -> ' c' ca at 't ', "cot" -> ' c' co ot 't '.
    // idf = ln((1 + N) / (1 + df)) + 1: shared grams (df 2) = 1, the others (df 1) = ln(1.5) + 1 = 1.405465.
    // Both vectors have squared norm 2 * 1 + 2 * 1.405465^2 = 5.950664; they share ' c' and 't ':
    // cosine = (1 + 1) / 5.950664 = 0.336097.
    const hits = createTrigramEngine(
      [
        { id: 'cot', title: '', text: 'cot' },
        { id: 'cat', title: '', text: 'cat' },
      ],
      { n: 2 },
    ).search('cat', 10);
    expect(hits.map((h) => h.id)).toEqual(['cat', 'cot']);
    expect(hits[0].score).toBeCloseTo(1, 12);
    expect(hits[1].score).toBeCloseTo(0.336097, 6);
  });

  it('createTrigramEngine - damps repeated grams with sublinear tf', () => {
    // n = 2: "ab ab cd" has ' a' ab 'b ' twice (idf 1.405465, weight (1 + ln 2) * 1.405465 = 2.379659)
    // and ' c' cd 'd ' once (df 2, idf 1, weight 1). Norm = sqrt(3 * 2.379659^2 + 3) = 4.470831.
    // Query "cd" = three grams of weight 1, norm sqrt(3): cosine = 3 / (sqrt(3) * 4.470831) = 0.387411
    // (raw tf would give 0.335176).
    const hits = createTrigramEngine(
      [
        { id: 'long', title: '', text: 'ab ab cd' },
        { id: 'short', title: '', text: 'cd' },
      ],
      { n: 2 },
    ).search('cd', 10);
    expect(hits.map((h) => h.id)).toEqual(['short', 'long']);
    expect(hits[1].score).toBeCloseTo(0.387411, 6);
  });

  it('createTrigramEngine - scores a document against its own text as cosine 1', () => {
    const engine = createTrigramEngine(corpus);
    const [best] = engine.search(`${corpus[3].title} ${corpus[3].text}`, 1);
    expect(best.id).toBe('kv');
    expect(best.score).toBeCloseTo(1, 12);
  });

  it('createTrigramEngine - returns scores in (0, 1], best first', () => {
    const hits = createTrigramEngine(corpus).search('ranked message values', 10);
    expect(hits.length).toBeGreaterThan(1);
    for (const hit of hits) {
      expect(hit.score).toBeGreaterThan(0);
      expect(hit.score).toBeLessThanOrEqual(1 + 1e-12);
    }
    const scores = hits.map((h) => h.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });

  it('createTrigramEngine - returns nothing for an empty or unseen query', () => {
    const engine = createTrigramEngine(corpus);
    expect(engine.search('', 10)).toEqual([]);
    expect(engine.search('  ...  ', 10)).toEqual([]);
    expect(engine.search('ωψζ', 10)).toEqual([]);
  });

  it('createTrigramEngine - breaks ties by id ascending and respects the limit', () => {
    const twins: Document[] = ['d2', 'd10', 'd1'].map((id) => ({ id, title: 'twin', text: 'identical body' }));
    const engine = createTrigramEngine(twins);
    // Code-unit order, not numeric: 'd1' < 'd10' < 'd2'.
    expect(engine.search('identical', 10).map((h) => h.id)).toEqual(['d1', 'd10', 'd2']);
    expect(engine.search('identical', 1).map((h) => h.id)).toEqual(['d1']);
  });

  it('createTrigramEngine - rejects a gram length that is not a positive integer', () => {
    expect(() => createTrigramEngine(corpus, { n: 0 })).toThrow(RangeError);
    expect(() => createTrigramEngine(corpus, { n: 2.5 })).toThrow(RangeError);
  });
});
