import { UUID_V7_PATTERN } from './patterns';
import { newUuidV7, nextV7State, randomHex } from './random-ids';

type RandomIds = typeof import('./random-ids');

/** A fresh copy of the module: its own clock state, and an empty pool (its first draw fills it). */
function freshModule(): RandomIds {
  let ids!: RandomIds;
  jest.isolateModules(() => {
    ids = jest.requireActual<RandomIds>('./random-ids');
  });
  return ids;
}

/** The crypto module object itself (a namespace import would be a copy that spying does not reach). */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const nodeCrypto: typeof import('node:crypto') = require('node:crypto');

/** A fresh copy of the module whose pool is filled with 0, 1, 2, … 255, 0, … */
function withPatternedPool(): { ids: RandomIds; fills: () => number } {
  const fill = jest.spyOn(nodeCrypto, 'randomFillSync').mockImplementation(((buffer: Buffer) => {
    for (let i = 0; i < buffer.length; i++) buffer[i] = i & 0xff;
    return buffer;
  }) as typeof nodeCrypto.randomFillSync);
  return { ids: freshModule(), fills: () => fill.mock.calls.length };
}

const randomTail = (uuid: string) => uuid.replace(/-/g, '').slice(20);

describe('random ids', () => {
  afterEach(() => jest.restoreAllMocks());

  it('newUuidV7 - ids are UUIDv7, unique, sort in the order they were minted, and carry fresh random bits', () => {
    const ids = Array.from({ length: 20_000 }, () => newUuidV7());
    for (const id of ids) expect(id).toMatch(UUID_V7_PATTERN);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
    // The counter alone would keep them unique and sorted: the last 48 bits are random for each id.
    expect(new Set(ids.map(randomTail)).size).toBe(ids.length);
  });

  it('newUuidV7 - within one millisecond, and when the clock steps back, the next id still sorts after', () => {
    const fresh = freshModule();
    const now = jest.spyOn(Date, 'now').mockReturnValue(2_000_000_000_000);
    const sameMs = Array.from({ length: 1000 }, () => fresh.newUuidV7());
    now.mockReturnValue(1_999_999_999_000);
    const afterStepBack = fresh.newUuidV7();
    now.mockReturnValue(2_000_000_000_001);
    const nextMs = fresh.newUuidV7();
    const ids = [...sameMs, afterStepBack, nextMs];
    expect([...ids].sort()).toEqual(ids);
    // The timestamp is the millisecond it was minted in (48 bits, the first 12 hex digits).
    expect(parseInt(nextMs.replace(/-/g, '').slice(0, 12), 16)).toBe(2_000_000_000_001);
  });

  it('nextV7State - a new millisecond seeds the counter from 31 random bits; the same or an earlier one counts up', () => {
    const ones = new Uint8Array(16).fill(0xff);
    expect(nextV7State({ msecs: 10, seq: 5 }, 11, ones)).toEqual({ msecs: 11, seq: 0x7fffffff });
    const bytes = Uint8Array.from({ length: 16 }, (_, i) => i);
    expect(nextV7State({ msecs: -Infinity, seq: 0 }, 11, bytes)).toEqual({ msecs: 11, seq: 0x06070809 });
    expect(nextV7State({ msecs: 11, seq: 7 }, 11, ones)).toEqual({ msecs: 11, seq: 8 });
    expect(nextV7State({ msecs: 11, seq: 7 }, 9, ones)).toEqual({ msecs: 11, seq: 8 });
  });

  it('nextV7State - a counter that wraps borrows the next millisecond', () => {
    const bytes = new Uint8Array(16);
    expect(nextV7State({ msecs: 11, seq: 0x7fffffff }, 11, bytes)).toEqual({ msecs: 11, seq: -0x80000000 });
    expect(nextV7State({ msecs: 11, seq: -1 }, 11, bytes)).toEqual({ msecs: 12, seq: 0 });
  });

  it('randomHex - each draw takes the next bytes of the pool, none twice, and refills it when it runs out', () => {
    const { ids, fills } = withPatternedPool();
    const draws = Array.from({ length: 600 }, () => ids.randomHex(8));
    // 512 draws of 8 bytes empty a 4 KiB pool: the 513th refills it.
    expect(fills()).toBe(2);
    const expected = (offset: number) => Buffer.from(Array.from({ length: 8 }, (_, i) => (offset + i) & 0xff)).toString('hex');
    draws.forEach((draw, i) => expect(draw).toBe(expected((i % 512) * 8)));
  });

  it('randomHex - lowercase hex of the asked size; refuses sizes it does not draw', () => {
    const values = Array.from({ length: 2000 }, () => randomHex(8));
    for (const v of values) expect(v).toMatch(/^[0-9a-f]{16}$/);
    expect(new Set(values).size).toBe(values.length);
    expect(randomHex(16)).toMatch(/^[0-9a-f]{32}$/);
    for (const n of [0, -1, 1.5, 65, 5000]) expect(() => randomHex(n)).toThrow(RangeError);
  });
});
