import fc from 'fast-check';
import { defaultRrfOptions, fuseRrf, type RankedList } from './rrf';

describe('fuseRrf', () => {
  it('fuseRrf - matches a hand-worked example at k=60', () => {
    // bm25: a b c ; trigram: b c d
    // a = 1/61                 = 0.016393...
    // b = 1/62 + 1/61          = 0.032522...
    // c = 1/63 + 1/62          = 0.031002...
    // d = 1/63                 = 0.015873...
    const fused = fuseRrf(
      [
        { profile: 'bm25', ids: ['a', 'b', 'c'] },
        { profile: 'trigram', ids: ['b', 'c', 'd'] },
      ],
      defaultRrfOptions(),
    );
    expect(fused.map((f) => f.id)).toEqual(['b', 'c', 'a', 'd']);
    expect(fused[0].score).toBeCloseTo(1 / 62 + 1 / 61, 12);
    expect(fused[1].score).toBeCloseTo(1 / 63 + 1 / 62, 12);
    expect(fused[2].score).toBeCloseTo(1 / 61, 12);
    expect(fused[3].score).toBeCloseTo(1 / 63, 12);
    expect(fused[0].ranks).toEqual({ bm25: 2, trigram: 1 });
    expect(fused[3].ranks).toEqual({ trigram: 3 });
  });

  it('fuseRrf - applies per-profile weights', () => {
    const fused = fuseRrf(
      [
        { profile: 'bm25', ids: ['a'] },
        { profile: 'trigram', ids: ['b'] },
      ],
      { k: 60, rankWindow: 10, weights: { trigram: 2 } },
    );
    expect(fused.map((f) => f.id)).toEqual(['b', 'a']);
    expect(fused[0].score).toBeCloseTo(2 / 61, 12);
  });

  it('fuseRrf - considers only the rank window of each list', () => {
    const fused = fuseRrf([{ profile: 'bm25', ids: ['a', 'b', 'c'] }], { k: 60, rankWindow: 2 });
    expect(fused.map((f) => f.id)).toEqual(['a', 'b']);
  });

  it('fuseRrf - breaks exact ties by best rank, then list count, then id', () => {
    // x: rank 1 in p, absent in q; y: rank 1 in q -> same score, same best rank, same count -> by id.
    const fused = fuseRrf(
      [
        { profile: 'p', ids: ['y2', 'x'] },
        { profile: 'q', ids: ['x2', 'y'] },
      ],
      { k: 60, rankWindow: 10 },
    );
    expect(fused.map((f) => f.id)).toEqual(['x2', 'y2', 'x', 'y']);
  });

  it('fuseRrf - keeps the first rank of an id repeated within one list', () => {
    const fused = fuseRrf([{ profile: 'p', ids: ['a', 'a', 'b'] }], { k: 60, rankWindow: 10 });
    expect(fused).toEqual([
      { id: 'a', score: 1 / 61, ranks: { p: 1 } },
      { id: 'b', score: 1 / 63, ranks: { p: 3 } },
    ]);
  });

  it('fuseRrf - rejects a negative k', () => {
    expect(() => fuseRrf([], { k: -1, rankWindow: 10 })).toThrow(RangeError);
  });

  // Property tests: lists of unique ids per profile.
  const profileNames = ['bm25', 'trigram', 'wordvec', 'p4'];
  const listsArb = fc
    .uniqueArray(fc.constantFrom(...profileNames), { minLength: 1, maxLength: 4 })
    .chain((profiles) =>
      fc.tuple(
        ...profiles.map((profile) =>
          fc.uniqueArray(fc.integer({ min: 0, max: 30 }).map((n) => `d${n}`), { maxLength: 20 }).map((ids): RankedList => ({ profile, ids })),
        ),
      ),
    );

  it('fuseRrf - a document ranked first by every profile is first', () => {
    fc.assert(
      fc.property(listsArb, (lists) => {
        const withTop = lists.map((l) => ({ ...l, ids: ['top', ...l.ids.filter((id) => id !== 'top')] }));
        expect(fuseRrf(withTop, defaultRrfOptions())[0].id).toBe('top');
      }),
    );
  });

  it('fuseRrf - adding a profile never drops a document from the fused list', () => {
    fc.assert(
      fc.property(listsArb, fc.uniqueArray(fc.integer({ min: 0, max: 40 }).map((n) => `d${n}`), { maxLength: 20 }), (lists, extra) => {
        const before = new Set(fuseRrf(lists, defaultRrfOptions()).map((f) => f.id));
        const after = new Set(fuseRrf([...lists, { profile: 'extra', ids: extra }], defaultRrfOptions()).map((f) => f.id));
        for (const id of before) expect(after.has(id)).toBe(true);
      }),
    );
  });

  it('fuseRrf - the result does not depend on the order of the profiles', () => {
    fc.assert(
      fc.property(listsArb, fc.integer(), (lists, seed) => {
        const shuffled = [...lists].sort((a, b) => ((a.profile.charCodeAt(0) * seed) % 7) - ((b.profile.charCodeAt(0) * seed) % 7));
        expect(fuseRrf(shuffled, defaultRrfOptions())).toEqual(fuseRrf(lists, defaultRrfOptions()));
        expect(fuseRrf([...lists].reverse(), defaultRrfOptions())).toEqual(fuseRrf(lists, defaultRrfOptions()));
      }),
    );
  });
  it('fuseRrf - refuses a negative or non-finite weight instead of producing negative or NaN scores', () => {
    const lists = [{ profile: 'bm25', ids: ['a'] }];
    for (const w of [-1, -0.001, Number.NaN, Number.POSITIVE_INFINITY, '2' as unknown as number]) {
      expect(() => fuseRrf(lists, { k: 60, rankWindow: 10, weights: { bm25: w } })).toThrow(/weight of profile bm25/);
    }
    expect(fuseRrf(lists, { k: 60, rankWindow: 10, weights: { bm25: 0 } })[0].score).toBe(0);
  });

  it('fuseRrf - a profile named after an Object.prototype member is fused like any other, weighing 1 unless the weights name it', () => {
    const lists = [{ profile: 'constructor', ids: ['a'] }, { profile: 'bm25', ids: ['b'] }];
    const fused = fuseRrf(lists, { k: 60, rankWindow: 10, weights: {} });
    expect(fused.map((f) => [f.id, f.score, f.ranks])).toEqual([['a', 1 / 61, { constructor: 1 }], ['b', 1 / 61, { bm25: 1 }]]);
    const proto = fuseRrf([{ profile: '__proto__', ids: ['a'] }], { k: 60, rankWindow: 10 });
    expect(Object.hasOwn(proto[0].ranks, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(proto[0].ranks)).toBe(Object.prototype);
  });

  it('fuseRrf - every score is finite and >= 0 for any valid weights', () => {
    fc.assert(
      fc.property(listsArb, fc.dictionary(fc.constantFrom('bm25', 'trigram', 'vector', 'x'), fc.double({ min: 0, max: 1000, noNaN: true })), fc.double({ min: 0, max: 1e6, noNaN: true }), (lists, weights, k) => {
        for (const item of fuseRrf(lists, { k, rankWindow: 100, weights })) expect(Number.isFinite(item.score) && item.score >= 0).toBe(true);
      }),
    );
  });
});
