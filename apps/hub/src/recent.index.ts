import type { WorkflowSummary } from '@chorus/envelope';

/**
 * Summaries of the most recent workflows, bounded, so listing recent workflows does not read the
 * whole ledger. `complete` says whether it holds every workflow the ledger holds.
 */
export class RecentIndex {
  private readonly rows = new Map<string, WorkflowSummary>();
  private evicted = false;

  constructor(private readonly capacity: number) {}

  get complete(): boolean {
    return !this.evicted;
  }

  get size(): number {
    return this.rows.size;
  }

  upsert(row: WorkflowSummary): void {
    const key = `${row.tenant_id}.${row.correlation_id}`;
    if (!this.rows.has(key) && this.rows.size >= this.capacity) {
      const oldest = this.rows.keys().next().value as string;
      this.rows.delete(oldest);
      this.evicted = true;
    }
    this.rows.set(key, row);
  }

  /** Forgets everything (before a rebuild); `complete` again until something is evicted. */
  clear(): void {
    this.rows.clear();
    this.evicted = false;
  }

  /** Marks the index incomplete (the ledger held more than it could keep). */
  markIncomplete(): void {
    this.evicted = true;
  }

  values(): IterableIterator<WorkflowSummary> {
    return this.rows.values();
  }
}
