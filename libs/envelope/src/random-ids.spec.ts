import { UUID_V7_PATTERN } from './patterns';
import { newUuidV7, randomHex } from './random-ids';

describe('random ids', () => {
  afterEach(() => jest.restoreAllMocks());

  it('newUuidV7 - ids are UUIDv7, unique, and sort in the order they were minted', () => {
    const ids = Array.from({ length: 20_000 }, () => newUuidV7());
    for (const id of ids) expect(id).toMatch(UUID_V7_PATTERN);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });

  it('newUuidV7 - within one millisecond, and when the clock steps back, the next id still sorts after', () => {
    const now = jest.spyOn(Date, 'now').mockReturnValue(2_000_000_000_000);
    const sameMs = Array.from({ length: 1000 }, () => newUuidV7());
    now.mockReturnValue(1_999_999_999_000);
    const afterStepBack = newUuidV7();
    now.mockReturnValue(2_000_000_000_001);
    const nextMs = newUuidV7();
    const ids = [...sameMs, afterStepBack, nextMs];
    expect([...ids].sort()).toEqual(ids);
    // The timestamp is the millisecond it was minted in (48 bits, the first 12 hex digits).
    expect(parseInt(nextMs.replace(/-/g, '').slice(0, 12), 16)).toBe(2_000_000_000_001);
  });

  it('randomHex - the asked number of bytes, different every time, also across refills of the pool', () => {
    const values = Array.from({ length: 2000 }, () => randomHex(8));
    for (const v of values) expect(v).toMatch(/^[0-9a-f]{16}$/);
    expect(new Set(values).size).toBe(values.length);
    expect(randomHex(16)).toMatch(/^[0-9a-f]{32}$/);
  });
});
