import { randomFillSync } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';

/**
 * Random ids for every message Chorus publishes: UUIDv7 message and correlation ids, W3C trace and
 * span ids. Every call into the CSPRNG costs far more than the bytes it returns:
 * `crypto.getRandomValues` (what uuid 14 calls for each id) and `randomBytes` took about 5 to 6 µs a
 * call on the benchmark machine, several times a `JSON.parse` of a 1 KB envelope, and were 3 % of the
 * all-in-one process's CPU under load (docs/benchmarks.md, "Profiling"). So the bytes are drawn from
 * the same CSPRNG 4 KiB at a time, as Node's own `crypto.randomUUID()` does with its entropy cache.
 * The bytes are the same quality, and each is handed out once; only the number of calls changes.
 */
const POOL_BYTES = 4096;
/** The most one draw takes (a trace id takes 16 bytes, a UUID 16). */
const MAX_DRAW_BYTES = 64;
const pool = Buffer.allocUnsafe(POOL_BYTES);
let used = POOL_BYTES;

/**
 * The next `n` bytes of the pool, as a view that the caller must consume before its next call into
 * this module: every caller here reads them at once, synchronously.
 */
function take(n: number): Buffer {
  if (!Number.isInteger(n) || n < 1 || n > MAX_DRAW_BYTES) throw new RangeError(`draw 1 to ${MAX_DRAW_BYTES} random bytes at a time, not ${n}`);
  if (used + n > POOL_BYTES) {
    randomFillSync(pool);
    used = 0;
  }
  const start = used;
  used += n;
  return pool.subarray(start, used);
}

/** `bytes` random bytes as lowercase hex (a trace id takes 16, a span id 8). */
export function randomHex(bytes: number): string {
  return take(bytes).toString('hex');
}

/** Where the last UUIDv7 of this thread stands: its millisecond and its 32-bit counter. */
export interface V7State {
  msecs: number;
  seq: number;
}

/**
 * The state for the next UUIDv7 minted at `now` with these random bytes: in a new millisecond the
 * counter (rand_a and the top of rand_b) starts from 31 random bits, so it has room to count up;
 * within the same millisecond, or when the clock steps back, it counts up from the last id's; should
 * it wrap, the id borrows the next millisecond (RFC 9562 §6.2, method 1). It is uuid's own rule
 * (`updateV7State`), which uuid applies only when it draws the random bytes itself and keeps private.
 */
export function nextV7State(last: Readonly<V7State>, now: number, random: Uint8Array): V7State {
  if (now > last.msecs) return { msecs: now, seq: ((random[6] << 24) | (random[7] << 16) | (random[8] << 8) | random[9]) & 0x7fffffff };
  const seq = (last.seq + 1) | 0;
  return { msecs: seq === 0 ? last.msecs + 1 : last.msecs, seq };
}

let last: V7State = { msecs: -Infinity, seq: 0 };

/**
 * A UUIDv7 (RFC 9562). This thread's ids sort in the order they were minted ({@link nextV7State});
 * ids of different processes or threads interleave by millisecond only, as uuid's do.
 */
export function newUuidV7(): string {
  const random = take(16);
  last = nextV7State(last, Date.now(), random);
  return uuidv7({ random, msecs: last.msecs, seq: last.seq });
}
