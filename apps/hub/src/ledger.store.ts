import { KeyValueStore, type Bus } from '@chorus/bus';
import { fitRecord, ledgerKey, type WorkflowRecord } from '@chorus/correlation';
import type { Logger } from '@chorus/observability';

/** Room left in a message for the KV write's headers (a revision check). */
const HEADER_ROOM = 512;

export interface LedgerEntry {
  record: WorkflowRecord;
  revision: number;
}

/**
 * The workflow ledger: one KV entry per workflow, written with revision checks so two hub replicas
 * never overwrite each other, and a bounded in-memory cache so memory stays flat however many
 * workflows pass through.
 */
export class LedgerStore {
  private readonly cache = new Map<string, LedgerEntry>();

  private constructor(
    private readonly kv: KeyValueStore<WorkflowRecord>,
    private readonly cacheSize: number,
    private readonly retentionMs: number,
    /** The server's `max_payload`, as the connection last heard it. */
    private readonly maxPayload: () => number | undefined,
  ) {}

  static async open(bus: Bus, bucket: string, retentionMs: number, cacheSize: number, log?: Logger): Promise<LedgerStore> {
    const kv = await KeyValueStore.open<WorkflowRecord>(bus, bucket, { history: 1, ttlMs: retentionMs, ttlSetting: 'CHORUS_HUB_RETENTION_MS' }, log);
    return new LedgerStore(kv, cacheSize, retentionMs, () => bus.nc.info?.max_payload);
  }

  /**
   * The record, from the cache or the bucket. `assumeNew` (a workflow's first envelope) skips the
   * bucket on a cache miss: the save then creates the record, and fails as a revision conflict if
   * it did exist after all, so the caller loads it for real and tries again.
   */
  async load(tenantId: string, correlationId: string, options: { assumeNew?: boolean } = {}): Promise<LedgerEntry | null> {
    const key = ledgerKey(tenantId, correlationId);
    const cached = this.cache.get(key);
    // The bucket drops an entry `retentionMs` after its last write; the cache must not outlive it.
    if (cached && Date.parse(cached.record.updated_at) + this.retentionMs <= Date.now()) this.cache.delete(key);
    else if (cached) {
      this.cache.delete(key);
      this.cache.set(key, cached);
      return cached;
    }
    if (options.assumeNew) return null;
    // From the stream's leader, as `read` does: a replica's direct get may lag, and the active hub
    // then applied envelopes to an older revision (a conflict, applied again) or read "no workflow".
    const stored = await this.kv.latest(key);
    if (!stored) return null;
    const entry = { record: stored.value, revision: stored.revision };
    this.remember(key, entry);
    return entry;
  }

  /** The stored record straight from the bucket, bypassing (and not filling) the cache. */
  async read(tenantId: string, correlationId: string): Promise<WorkflowRecord | null> {
    // From the stream's leader: a replica that lags would answer "not found" for a workflow the
    // active hub recorded a moment ago (a standby hub answers reads too).
    return (await this.kv.latest(ledgerKey(tenantId, correlationId)))?.value ?? null;
  }

  /** Forgets the cache: another hub may have written the ledger meanwhile. */
  clear(): void {
    this.cache.clear();
  }

  /**
   * Writes the record if nobody changed it since `revision` (0: if it does not exist yet). A record
   * too large for one message is stored with its texts cut to fit (`log` hears of it): a record that
   * is never stored leaves its workflow unreadable while its end is announced.
   */
  async save(record: WorkflowRecord, revision: number, log?: Logger): Promise<LedgerEntry> {
    const key = ledgerKey(record.tenant_id, record.correlation_id);
    const write = (r: WorkflowRecord) => (revision === 0 ? this.kv.create(key, r) : this.kv.update(key, r, revision));
    try {
      let next: number;
      try {
        next = await write(record);
      } catch (e) {
        const maxPayload = this.maxPayload();
        if (!/max_payload/i.test(String((e as Error)?.message)) || maxPayload === undefined) throw e;
        const fitted = fitRecord(record, maxPayload - HEADER_ROOM);
        if (!fitted) throw e;
        log?.warn({ max_payload: maxPayload }, 'workflow record too large for one message: stored with its texts cut to fit');
        record = fitted;
        next = await write(record);
      }
      const entry = { record, revision: next };
      // A finished workflow is kept too: its final status update comes back to the hub right after.
      // Evicted like any other entry, least recently used first.
      this.remember(key, entry);
      return entry;
    } catch (e) {
      this.cache.delete(key);
      throw e;
    }
  }

  /** The tenant of a workflow known only by its correlation id. */
  async findTenant(correlationId: string): Promise<string | null> {
    // One message from the stream's leader, not a consumer on whichever replica (which can lag).
    const found = await this.kv.latest(`*.${correlationId}`);
    return found ? found.key.slice(0, found.key.length - correlationId.length - 1) : null;
  }

  /** The stored records, in the order they were last written; with `since`, those written since; or those of a range of revisions. */
  entries(options: { since?: Date; fromRevision?: number; beforeRevision?: number } = {}): AsyncGenerator<{ key: string; value: WorkflowRecord; revision: number }> {
    return this.kv.entries('>', options);
  }

  /** When the oldest and newest stored records were written (null: none is). */
  span(): Promise<{ first: Date; last: Date; firstRevision: number; lastRevision: number } | null> {
    return this.kv.span();
  }

  private remember(key: string, entry: LedgerEntry): void {
    this.cache.delete(key);
    this.cache.set(key, entry);
    if (this.cache.size > this.cacheSize) {
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
  }
}

