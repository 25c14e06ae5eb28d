import { boundFieldErrors, clipArrays, isWithinJsonLimits, sanitizeJson } from './json-limits';

const deep = (depth: number, kind: 'object' | 'array') => JSON.parse(kind === 'object' ? `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}` : `${'['.repeat(depth)}1${']'.repeat(depth)}`);
/** An own key, even `__proto__`, as JSON.parse makes it. */
const withKey = (key: string, value: unknown) => JSON.parse(`{${JSON.stringify(key)}:${JSON.stringify(value)},"ok":1}`);

describe('json limits', () => {
  it('isWithinJsonLimits - accepts nesting up to the limit and refuses one level more, at any depth without overflowing', () => {
    expect(isWithinJsonLimits(deep(63, 'array'), 64)).toBe(true); // 63 arrays around a number: 63 levels
    expect(isWithinJsonLimits(deep(64, 'object'), 64)).toBe(true);
    expect(isWithinJsonLimits(deep(65, 'object'), 64)).toBe(false);
    expect(isWithinJsonLimits(deep(100_000, 'array'), 64)).toBe(false);
    expect(isWithinJsonLimits({ a: [1, 'x', null, { b: true }] })).toBe(true);
  });

  it('isWithinJsonLimits - refuses an own reserved key anywhere, not an inherited one', () => {
    for (const key of ['__proto__', 'constructor', 'prototype']) {
      expect(isWithinJsonLimits(withKey(key, 1))).toBe(false);
      expect(isWithinJsonLimits({ payload: { list: [withKey(key, {})] } })).toBe(false);
    }
    expect(isWithinJsonLimits({ toString: 1, valueOf: {} })).toBe(true);
    expect(isWithinJsonLimits(Object.create({ constructor: 1 }))).toBe(true);
  });

  it('isWithinJsonLimits / sanitizeJson - a number that is not finite is named and replaced by null', () => {
    expect(isWithinJsonLimits({ a: [1, 2.5, -0] })).toBe(true);
    expect(isWithinJsonLimits(JSON.parse('{"a":[1,1e999]}'))).toBe(false);
    const { value, errors } = sanitizeJson(JSON.parse('{"a":[1,-1e999],"b":{"c":1e999}}'));
    expect(value).toEqual({ a: [1, null], b: { c: null } });
    expect(errors.map((e) => e.field)).toEqual(['a.1', 'b.c']);
  });

  it('sanitizeJson - names each deep value and reserved key, and keeps the rest for the validators', () => {
    const input = { next_steps: deep(5000, 'array'), payload: JSON.parse('{"__proto__":{"status":"x"},"query":"q"}'), attempt: 1 };
    const { value, errors } = sanitizeJson(input, 64);
    expect(errors.map((e) => e.field)).toEqual([`next_steps${'.0'.repeat(63)}`, 'payload.__proto__']);
    expect(value).toMatchObject({ payload: { query: 'q' }, attempt: 1 });
    expect(Object.hasOwn((value as { payload: object }).payload, '__proto__')).toBe(false);
    expect(isWithinJsonLimits(value, 64)).toBe(true);
  });

  it('clipArrays - keeps one item past the limit, at every level', () => {
    const { value, clipped } = clipArrays({ a: Array.from({ length: 50 }, () => [1, 2, 3, 4, 5]) }, 3);
    expect(clipped).toBe(true);
    expect((value as { a: number[][] }).a).toHaveLength(4);
    expect((value as { a: number[][] }).a[0]).toEqual([1, 2, 3, 4]);
    expect(clipArrays({ a: [1, 2, 3, 4] }, 3)).toEqual({ value: { a: [1, 2, 3, 4] }, clipped: false });
  });

  it('boundFieldErrors - keeps the first fields with bounded text and counts the rest', () => {
    const many = Array.from({ length: 9000 }, (_, i) => ({ field: `f${i}`, messages: ['bad'] }));
    const bounded = boundFieldErrors(many, 50);
    expect(bounded).toHaveLength(51);
    expect(bounded[50]).toEqual({ field: '$', messages: ['8950 more invalid fields not listed'] });
    const long = boundFieldErrors([{ field: 'k'.repeat(100_000), messages: Array(50).fill('m'.repeat(10_000)) }]);
    expect(JSON.stringify(long).length).toBeLessThan(6000);
    expect(boundFieldErrors([{ field: 'a', messages: ['x'] }])).toEqual([{ field: 'a', messages: ['x'] }]);
  });
});
