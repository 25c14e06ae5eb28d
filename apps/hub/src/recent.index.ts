import type { WorkflowSummary } from '@chorus/envelope';

/**
 * Summaries of the most recent workflows, bounded, so listing recent workflows does not read the
 * whole ledger. `complete` says whether it holds every workflow the ledger holds.
 */
export class RecentIndex {
  private rows = new Map<string, WorkflowSummary>();
  /** The tenant of each correlation id it holds (the last one seen, should two tenants share an id). */
  private tenants = new Map<string, string>();
  private evicted = false;
  /** Built from part of the ledger (a takeover's window) and not yet filled from the rest. */
  private partial = false;

  constructor(private readonly capacity: number) {}

  get complete(): boolean {
    return !this.evicted && !this.partial;
  }

  /** Rows it can take before it evicts. */
  get room(): number {
    return Math.max(0, this.capacity - this.rows.size);
  }

  get size(): number {
    return this.rows.size;
  }

  upsert(row: WorkflowSummary): void {
    const key = keyOf(row);
    if (!this.rows.has(key) && this.rows.size >= this.capacity) {
      const oldest = this.rows.keys().next().value as string;
      this.forgetTenant(this.rows.get(oldest)!);
      this.rows.delete(oldest);
      this.evicted = true;
    }
    this.rows.set(key, row);
    this.tenants.set(row.correlation_id, row.tenant_id);
  }

  /**
   * The tenant of a workflow it holds, by its correlation id alone: a read that names no tenant
   * (development mode, the CLI) finds a recent workflow here instead of in the ledger, where a
   * look-up by a pattern costs in proportion to the ledger (hub.queries.ts).
   */
  tenantOf(correlationId: string): string | undefined {
    return this.tenants.get(correlationId);
  }

  /** Forgets everything (before a rebuild); `complete` again until something is evicted. */
  clear(): void {
    this.rows.clear();
    this.tenants.clear();
    this.evicted = false;
    this.partial = false;
  }

  /** Marks the index incomplete (the ledger held more than it could keep). */
  markIncomplete(): void {
    this.evicted = true;
  }

  /** Marks the index as built from the newest part of the ledger only, until {@link backfill} says otherwise. */
  markPartial(): void {
    this.partial = true;
  }

  /**
   * Adds rows from the older ledger. A row it already holds is kept as it is (it is newer). All
   * are then ordered by when their workflow started, the order live rows arrive in and the index
   * evicts in, and the earliest started go first past its capacity (a list, newest first, then
   * has no gap). `reachedStart`: the rows go back to the ledger's first record, so the index is
   * complete if nothing had to go.
   */
  backfill(older: readonly WorkflowSummary[], reachedStart: boolean): void {
    const rows = [...older.filter((row) => !this.rows.has(keyOf(row))), ...this.rows.values()];
    // Stable: rows that started in the same millisecond keep the order they came in.
    rows.sort((a, b) => (a.started_at < b.started_at ? -1 : a.started_at > b.started_at ? 1 : 0));
    const excess = Math.max(0, rows.length - this.capacity);
    if (excess > 0) this.evicted = true;
    this.rows = new Map(rows.slice(excess).map((row) => [keyOf(row), row]));
    this.tenants = new Map(rows.slice(excess).map((row) => [row.correlation_id, row.tenant_id]));
    if (reachedStart) this.partial = false;
  }

  values(): IterableIterator<WorkflowSummary> {
    return this.rows.values();
  }

  private forgetTenant(row: WorkflowSummary): void {
    if (this.tenants.get(row.correlation_id) === row.tenant_id) this.tenants.delete(row.correlation_id);
  }
}

function keyOf(row: WorkflowSummary): string {
  return `${row.tenant_id}.${row.correlation_id}`;
}
