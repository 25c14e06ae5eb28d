import fc from 'fast-check';
import { CorpusError } from './corpus.errors';
import { createDocumentCatalog, normalizeLimit, selectTopHits } from './document.catalog';

const docsWithIds = (ids: readonly string[]) => ids.map((id) => ({ id, title: '', text: '' }));

describe('createDocumentCatalog', () => {
  it('createDocumentCatalog - ranks ids in code-unit order', () => {
    const catalog = createDocumentCatalog(docsWithIds(['b', 'B', 'a10', 'a2']), 'test');
    // 'B' (0x42) < 'a10' < 'a2' < 'b'
    expect(Array.from(catalog.idRank)).toEqual([3, 0, 1, 2]);
  });

  it('createDocumentCatalog - rejects a duplicate id, naming the source', () => {
    expect(() => createDocumentCatalog(docsWithIds(['x', 'y', 'x']), 'bm25')).toThrow(
      new CorpusError('bm25', null, 'duplicate document id "x"'),
    );
  });
});

describe('normalizeLimit', () => {
  it('normalizeLimit - floors fractions, caps at the corpus size and maps NaN or <= 0 to 0', () => {
    expect(normalizeLimit(2.9, 10)).toBe(2);
    expect(normalizeLimit(50, 10)).toBe(10);
    expect(normalizeLimit(Number.POSITIVE_INFINITY, 10)).toBe(10);
    expect(normalizeLimit(0, 10)).toBe(0);
    expect(normalizeLimit(-1, 10)).toBe(0);
    expect(normalizeLimit(Number.NaN, 10)).toBe(0);
  });
});

describe('selectTopHits', () => {
  it('selectTopHits - equals a full sort by score descending then id ascending', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ maxLength: 3 }), { minLength: 1, maxLength: 40 }),
        // Few distinct score values so that ties are frequent; zero and negative must be dropped.
        fc.array(fc.integer({ min: -1, max: 4 }), { minLength: 40, maxLength: 40 }),
        fc.integer({ min: 0, max: 45 }),
        (ids, rawScores, limit) => {
          const catalog = createDocumentCatalog(docsWithIds(ids), 'test');
          const scores = Float64Array.from(ids, (_, d) => rawScores[d] / 2);
          const candidates = ids.map((_, d) => d);
          const expected = candidates
            .filter((d) => scores[d] > 0)
            .sort((a, b) => scores[b] - scores[a] || (ids[a] < ids[b] ? -1 : 1))
            .slice(0, limit)
            .map((d) => ({ id: ids[d], score: scores[d] }));
          expect(selectTopHits(catalog, scores, candidates, limit)).toEqual(expected);
        },
      ),
    );
  });

  it('selectTopHits - considers only the given candidates', () => {
    const catalog = createDocumentCatalog(docsWithIds(['a', 'b', 'c']), 'test');
    const scores = Float64Array.of(3, 2, 1);
    expect(selectTopHits(catalog, scores, [1, 2], 10)).toEqual([
      { id: 'b', score: 2 },
      { id: 'c', score: 1 },
    ]);
  });
});
