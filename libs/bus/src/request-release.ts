import { RequestOne } from '@nats-io/nats-core/internal';

/**
 * nats.js (@nats-io/nats-core 3.4, pinned in package.json) ends every request it sends through its
 * shared reply inbox with `RequestOne.cancel()`, answered or not, and `cancel()` rejects the
 * request's promise with a new `RequestError("cancelled")`. Once the request was answered that
 * promise is already settled, so the rejection is dropped, but the error, with its stack, is still
 * built: about 15 µs a request. Every JetStream publish, KV write and profile search is such a
 * request (about 15 a workflow), which made it one of the largest items in the hub's CPU profile
 * (docs/benchmarks.md).
 *
 * This lets an answered request be released (its timer cancelled, its token dropped from the
 * inbox's table: the rest of what `cancel()` does) without building that error. A request that
 * times out, or is cancelled before an answer, goes through the library's own `cancel()` as before.
 * It is applied once, and only to the implementation it was written for: if the library's
 * `RequestOne` ever looks different, it is left alone (and a test says so).
 */
const ANSWERED = Symbol('chorus.answered');
let applied: boolean | undefined;

interface RequestInternals {
  [ANSWERED]?: boolean;
  timer?: { cancel(): void };
  mux: { cancel(request: unknown): void };
  resolver(err: Error | null, msg: unknown): void;
  cancel(err?: Error): void;
}

export function releaseAnsweredRequestsCheaply(): boolean {
  if (applied !== undefined) return applied;
  const proto = RequestOne.prototype as unknown as RequestInternals;
  const { resolver, cancel } = proto;
  const source = typeof cancel === 'function' ? cancel.toString().replace(/\s+/g, ' ') : '';
  applied =
    typeof resolver === 'function' &&
    source.includes('this.timer.cancel()') &&
    source.includes('this.mux.cancel(this)') &&
    source.includes('this.deferred.reject(err ? err : new errors_1.RequestError("cancelled"))');
  if (!applied) return false;
  proto.resolver = function (this: RequestInternals, err: Error | null, msg: unknown): void {
    // The library's resolver settles the promise, then calls cancel() to release the request.
    this[ANSWERED] = true;
    resolver.call(this, err, msg);
  };
  proto.cancel = function (this: RequestInternals, err?: Error): void {
    if (err || !this[ANSWERED]) return cancel.call(this, err);
    this.timer?.cancel();
    this.mux.cancel(this);
  };
  return true;
}
