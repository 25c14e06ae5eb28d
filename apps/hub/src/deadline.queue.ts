import type { Logger } from '@chorus/observability';

/**
 * Deadlines of the workflows this hub has seen that are not finished, earliest first (a binary
 * heap). An entry may be stale (the workflow finished, or its deadline moved); whoever pops it
 * re-checks the record.
 */
export class DeadlineQueue {
  private readonly heap: Array<{ at: number; key: string }> = [];
  private readonly keys = new Map<string, number>();

  /** `log` hears of each deadline refused for not being a time. */
  constructor(private readonly log?: Pick<Logger, 'warn'>) {}

  /**
   * Adds or moves a key's deadline; false (and nothing changes) when `at` is not a finite time,
   * e.g. `Date.parse` of a date it cannot read, as older ledger records may hold: NaN compares
   * false with everything, and one in the heap would stop every later deadline from coming due.
   */
  schedule(key: string, at: number): boolean {
    if (!Number.isFinite(at)) {
      this.log?.warn({ key, at: String(at) }, 'deadline is not a time; not scheduled');
      return false;
    }
    if (this.keys.get(key) === at) return true;
    this.keys.set(key, at);
    this.heap.push({ at, key });
    this.up(this.heap.length - 1);
    return true;
  }

  /** Forgets a key (its workflow finished). */
  cancel(key: string): void {
    this.keys.delete(key);
  }

  /** Keys whose deadline is at or before `now`, removed from the queue. */
  popDue(now: number): string[] {
    const due: string[] = [];
    while (this.heap.length > 0 && this.heap[0].at <= now) {
      const top = this.pop();
      if (this.keys.get(top.key) === top.at) {
        this.keys.delete(top.key);
        due.push(top.key);
      }
    }
    return due;
  }

  get size(): number {
    return this.keys.size;
  }

  private pop(): { at: number; key: string } {
    const top = this.heap[0];
    const last = this.heap.pop()!;
    if (this.heap.length > 0) {
      this.heap[0] = last;
      this.down(0);
    }
    return top;
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.heap[parent].at <= this.heap[i].at) break;
      [this.heap[parent], this.heap[i]] = [this.heap[i], this.heap[parent]];
      i = parent;
    }
  }

  private down(i: number): void {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < this.heap.length && this.heap[l].at < this.heap[m].at) m = l;
      if (r < this.heap.length && this.heap[r].at < this.heap[m].at) m = r;
      if (m === i) return;
      [this.heap[m], this.heap[i]] = [this.heap[i], this.heap[m]];
      i = m;
    }
  }
}
