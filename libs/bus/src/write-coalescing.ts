import { NodeTransport } from '@nats-io/transport-node/lib/node_transport';

/**
 * nats.js (@nats-io/transport-node 3.4, pinned in package.json) hands the socket what its
 * connection has buffered once per microtask checkpoint, and each hand-over is a `write` system
 * call. A Chorus process answers one incoming batch of messages with many small writes in
 * separate microtasks (a JetStream publish, its consumer's ack, the next pull, a profile request,
 * a KV write...), so under load it made a system call for almost every message it sent: socket
 * writes were the largest single item in every Chorus process's CPU profile, 10 % of the
 * all-in-one process at concurrency 64 (docs/benchmarks.md).
 *
 * This gathers them per turn of the event loop: the first write of a turn goes out at once (so a
 * lone message, the common case on an idle system, waits for nothing), the socket is then corked,
 * and whatever else the turn writes goes out together in one `writev` when the turn ends
 * (`setImmediate`). Bytes and their order are unchanged, and nothing is held past the turn that
 * wrote it: a transport that closes or is discarded while corked (`nc.close()` destroys its socket
 * at once) hands the socket what the turn held first, so what the connection had sent before the
 * close still leaves, as it did without coalescing.
 *
 * It is applied once, to every connection of the process, and only to the implementation it was
 * written for: if the library's `NodeTransport` ever looks different, it is left alone (and a
 * test says so).
 */
const TURN = Symbol('chorus.writeTurn');
const enum Turn {
  /** The turn's first write went out on its own. */
  Open = 1,
  /** Later writes of the turn are held by the cork. */
  Corked = 2,
}
let applied: boolean | undefined;

interface TransportInternals {
  socket?: { cork(): void; uncork(): void };
  readonly isClosed: boolean;
  [TURN]?: Turn;
  _send(frame: Uint8Array): Promise<void>;
  _closed(err?: Error, internal?: boolean): Promise<void>;
  discard(): void;
}

/** Hands the socket what this turn's cork holds, now (before the socket is destroyed). */
function release(transport: TransportInternals): void {
  if (transport[TURN] !== Turn.Corked) return;
  transport[TURN] = Turn.Open;
  transport.socket?.uncork();
}

export function coalesceSocketWrites(): boolean {
  if (applied !== undefined) return applied;
  const proto = NodeTransport.prototype as unknown as TransportInternals;
  const { _send: send, _closed: closed, discard } = proto;
  const source = (f: unknown) => (typeof f === 'function' ? f.toString().replace(/\s+/g, ' ') : '');
  // What it relies on: every write goes through _send to socket.write, and the socket is only
  // destroyed in _closed and discard (which are wrapped to release the cork first).
  applied =
    source(send).includes('this.socket.write(frame, (err)') &&
    source(closed).includes('this.socket?.destroy()') &&
    source(discard).includes('this.socket.destroy()') &&
    Object.getOwnPropertyDescriptor(NodeTransport.prototype, 'isClosed')?.get !== undefined;
  if (!applied) return false;
  proto._send = function (this: TransportInternals, frame: Uint8Array): Promise<void> {
    const socket = this.socket;
    if (socket !== undefined && !this.isClosed) {
      const turn = this[TURN];
      if (turn === undefined) {
        this[TURN] = Turn.Open;
        setImmediate(() => {
          const corked = this[TURN] === Turn.Corked;
          this[TURN] = undefined;
          if (corked) socket.uncork();
        });
      } else if (turn === Turn.Open) {
        this[TURN] = Turn.Corked;
        socket.cork();
      }
    }
    return send.call(this, frame);
  };
  proto._closed = function (this: TransportInternals, err?: Error, internal?: boolean): Promise<void> {
    release(this);
    return closed.call(this, err, internal);
  };
  proto.discard = function (this: TransportInternals): void {
    release(this);
    discard.call(this);
  };
  return true;
}
