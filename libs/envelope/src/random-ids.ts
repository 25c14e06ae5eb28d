import { randomFillSync } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';

/**
 * Random ids for every message Chorus publishes: UUIDv7 message and correlation ids, W3C trace and
 * span ids. Each envelope takes 24 to 40 random bytes, and every call into the CSPRNG costs far more
 * than the bytes: `crypto.getRandomValues` (what uuid 14 calls for each id) and `randomBytes` took
 * about 5 to 6 µs a call on the benchmark machine, more than parsing a 1 KB envelope, and were 3 % of
 * the all-in-one process's CPU under load (docs/benchmarks.md, "Profiling"). So the bytes are drawn
 * from the same CSPRNG 4 KiB at a time, as Node's own `crypto.randomUUID()` does with its entropy
 * cache. The bytes are the same quality; only the number of calls changes.
 */
const POOL_BYTES = 4096;
const pool = Buffer.allocUnsafe(POOL_BYTES);
let used = POOL_BYTES;

/**
 * The next `n` bytes of the pool (n ≤ 64), as a view that the caller must consume before its next
 * call into this module: every caller here reads them at once, synchronously.
 */
function take(n: number): Buffer {
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

/**
 * Where the last UUIDv7 stands: its millisecond and its 31-bit counter. uuid applies the same rule
 * when it draws the random bytes itself, but keeps its state private, and given the bytes
 * (`random`) it keeps none: without this, two ids minted in the same millisecond would sort in
 * random order.
 */
const last = { msecs: -Infinity, seq: 0 };

/**
 * A UUIDv7 (RFC 9562) whose ids from this process sort in the order they were minted: the counter
 * (rand_a and the top of rand_b) starts from random bits in each new millisecond and counts up
 * within it; should it wrap, the id borrows the next millisecond (RFC 9562 §6.2, method 1).
 */
export function newUuidV7(): string {
  const random = take(16);
  const now = Date.now();
  if (now > last.msecs) {
    last.msecs = now;
    last.seq = random.readUInt32BE(6) & 0x7fffffff;
  } else {
    last.seq = (last.seq + 1) | 0;
    if (last.seq === 0) last.msecs += 1;
  }
  return uuidv7({ random, msecs: last.msecs, seq: last.seq });
}
