import { induceWordVectors, solveSymmetric } from './wordvec.induction';

const unit = (v: number[]): Float64Array => {
  const norm = Math.hypot(...v);
  return Float64Array.from(v, (x) => x / norm);
};

// Two-dimensional toy model: "x" words point along the first axis, "y" words along the second.
const model = new Map<string, Float64Array>([
  ['x1', unit([1, 0])], ['x2', unit([0.9, 0.1])], ['x3', unit([1, 0.05])],
  ['y1', unit([0, 1])], ['y2', unit([0.1, 0.9])], ['y3', unit([0.05, 1])],
]);
const lookup = (word: string): Float64Array | null => model.get(word) ?? null;
const split = (text: string): (string | null)[] => text.split(' ').map((w) => (w === '_' ? null : w));

/** Each known word seen often (five times or more), always among words of its own axis. */
function corpus(extra: string[]): (string | null)[][] {
  const texts: (string | null)[][] = [];
  for (let i = 0; i < 5; i++) texts.push(split('x1 x2 x3'), split('y1 y2 y3'));
  return [...texts, ...extra.map(split)];
}

describe('induceWordVectors', () => {
  it('induceWordVectors - points an unknown word the way its context points', () => {
    const induced = induceWordVectors(corpus(['x1 newx x2', 'y3 _ newy y1']), 2, lookup, { window: 2 });
    expect([...induced.keys()].sort()).toEqual(['newx', 'newy']);
    const newx = induced.get('newx')!;
    const newy = induced.get('newy')!;
    expect(Math.hypot(...newx)).toBeCloseTo(1, 9);
    expect(newx[0]).toBeGreaterThan(0.9);
    expect(newy[1]).toBeGreaterThan(0.9);
  });

  it('induceWordVectors - leaves numbers, one-character words and context-free words without a vector', () => {
    const induced = induceWordVectors(corpus(['x1 42 x2', 'x1 q x2', 'alone', 'x1 αβ x2']), 2, lookup, { window: 2 });
    expect([...induced.keys()]).toEqual(['αβ']);
  });

  it('induceWordVectors - induces nothing from a corpus with too few frequent known words to fit', () => {
    expect(induceWordVectors([split('x1 newx x2')], 2, lookup).size).toBe(0);
    // Enough occurrences, but fewer fitted words than 2 x dimensions when only x words are frequent.
    const xs = Array.from({ length: 5 }, () => split('x1 x2 newx'));
    expect(induceWordVectors(xs, 2, lookup).size).toBe(0);
  });
});

describe('solveSymmetric', () => {
  it('solveSymmetric - solves S X = R for a positive definite S', () => {
    const s = Float64Array.from([4, 2, 0, 2, 3, 1, 0, 1, 2]);
    const x = Float64Array.from([1, 2, 3, -1, 0, 2, 0.5, 1, -2]);
    // r = s x
    const r = new Float64Array(9);
    for (let i = 0; i < 3; i++) for (let j = 0; j < 3; j++) for (let k = 0; k < 3; k++) r[i * 3 + j] += s[i * 3 + k] * x[k * 3 + j];
    const solved = solveSymmetric(s, r, 3)!;
    for (let i = 0; i < 9; i++) expect(solved[i]).toBeCloseTo(x[i], 9);
  });

  it('solveSymmetric - returns null for a matrix that is not positive definite', () => {
    expect(solveSymmetric(Float64Array.from([1, 2, 2, 1]), Float64Array.from([1, 0, 0, 1]), 2)).toBeNull();
  });
});
