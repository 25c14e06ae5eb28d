import { HubBusyError } from './hub.errors';

/**
 * Bounds the reads one hub runs at once. A history read streams a workflow's envelopes into the
 * hub's own NATS connection, the one its lease renewal, deadline sweeps and envelopes use: hundreds
 * at once (a client looping on a large workflow's history) filled that connection until the lease
 * renewal timed out and the hub lost it. Up to `concurrency` reads run; up to `queued` more wait
 * their turn, in order; beyond that a read is refused at once ({@link HubBusyError}, retryable),
 * which the HTTP ingress answers with a 503 and `Retry-After`.
 */
export class ReadLimiter {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    private readonly concurrency: number,
    private readonly queued: number,
    private readonly what: string,
  ) {}

  /**
   * Runs `read` in its turn. One that waited longer than `maxWaitMs` for its turn is refused then,
   * not run: its caller has given up (it waits no longer than its request timeout).
   */
  async run<T>(read: () => Promise<T>, maxWaitMs = Number.POSITIVE_INFINITY): Promise<T> {
    if (this.running >= this.concurrency) {
      if (this.waiting.length >= this.queued) throw new HubBusyError(`${this.concurrency} ${this.what} are under way and ${this.queued} more wait`);
      const queuedAt = Date.now();
      await new Promise<void>((resolve) => this.waiting.push(resolve));
      if (Date.now() - queuedAt > maxWaitMs) {
        this.release();
        throw new HubBusyError(`this read waited more than ${maxWaitMs} ms for its turn`);
      }
    } else {
      this.running += 1;
    }
    try {
      return await read();
    } finally {
      this.release();
    }
  }

  /** The turn passes straight to the next waiting read (running stays the same), or is given back. */
  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running -= 1;
  }

  /** Reads running and waiting, for tests and metrics. */
  get load(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }
}
