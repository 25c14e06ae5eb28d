/**
 * What a hub reads from the ledger when it becomes the active one: the records that may still be
 * running (to arm their deadlines) and the newest ones (for its recent index), then, in the
 * background, older records for the index. See docs/hub.md, "Two or more replicas".
 */
import { toSummary, type WorkflowRecord } from '@chorus/correlation';
import { isTerminalStatus } from '@chorus/envelope';
import type { Logger } from '@chorus/observability';
import type { LedgerStore } from './ledger.store';
import type { RecentIndex } from './recent.index';

/** The activating hub's state the reads rebuild. */
export interface TakeoverTarget {
  ledger: LedgerStore;
  recent: RecentIndex;
  recentCapacity: number;
  log: Logger;
  /** Arms the deadline of a workflow that has not finished. */
  track(record: WorkflowRecord): void;
}

export interface TakeoverRead {
  /** Unfinished workflows found (their deadlines armed). */
  active: number;
  read: number;
  /** The whole ledger was read; else only the records written since `since`. */
  whole: boolean;
  since: Date | null;
  /** The older revisions to fill the recent index from, when the read left some and the index has room. */
  fill: { before: number; first: number } | null;
}

/**
 * Reads the records written within `windowMs` before the ledger's last write (all of them when the
 * ledger is younger): only those can still be running, since a workflow running when the last
 * write was made started less than the longest deadline before it, and was written when it started.
 * Reading just that window keeps a failover quick on a ledger of millions of workflows. Fills the
 * recent index with the newest of them.
 */
export async function readTakeoverWindow(t: TakeoverTarget, windowMs: number): Promise<TakeoverRead> {
  const span = await t.ledger.span();
  const since = span ? new Date(span.last.getTime() - windowMs) : null;
  const whole = !span || !since || span.first.getTime() >= since.getTime();
  const newest: WorkflowRecord[] = [];
  let active = 0;
  let read = 0;
  let lowestRevision = Infinity;
  for await (const { value, revision } of t.ledger.entries(whole || !since ? {} : { since })) {
    read += 1;
    lowestRevision = Math.min(lowestRevision, revision);
    if (!isTerminalStatus(value.status)) {
      t.track(value);
      active += 1;
    }
    newest.push(value);
    if (newest.length > t.recentCapacity * 2) keepNewest(newest, t.recentCapacity);
    // Let lease renewals and queries in between: a large window takes a while to read.
    if (read % 1000 === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  keepNewest(newest, t.recentCapacity);
  for (const r of newest.reverse()) t.recent.upsert(toSummary(r));
  let fill: TakeoverRead['fill'] = null;
  if (read > newest.length) t.recent.markIncomplete();
  else if (!whole && span) {
    t.recent.markPartial();
    fill = { before: Number.isFinite(lowestRevision) ? lowestRevision : span.lastRevision + 1, first: span.firstRevision };
  }
  return { active, read, whole, since: whole ? null : since, fill };
}

/**
 * {@link fillRecentIndex}, tried again (from the start, after 1 s, doubling up to 30 s) while
 * `current()` holds (the activation lasts): a takeover often follows a NATS hiccup, and until the
 * fill succeeds lists show only the workflows of the takeover window (with `complete: false`).
 */
export async function fillRecentIndexPatiently(t: TakeoverTarget, fill: NonNullable<TakeoverRead['fill']>, current: () => boolean): Promise<void> {
  for (let attempt = 1; current(); attempt++) {
    try {
      return await fillRecentIndex(t, fill, current);
    } catch (error) {
      const delay = Math.min(30_000, 1000 * 2 ** (attempt - 1));
      t.log.warn({ err: error, attempt, retry_in_ms: delay }, 'could not fill the recent index from the older ledger; trying again');
      await new Promise((resolve) => setTimeout(resolve, delay).unref());
    }
  }
}

/**
 * Fills the recent index with the records stored before revision `fill.before`, newest first, a
 * range of revisions at a time (a range of n holds at most n records), until the index is full or
 * the ledger's first revision is read: it keeps and parses at most the index's room, however large
 * the ledger (the server may send some records past each range's end, which are dropped). Runs in
 * the background; stops as soon as `current()` no longer holds.
 */
async function fillRecentIndex(t: TakeoverTarget, fill: NonNullable<TakeoverRead['fill']>, current: () => boolean): Promise<void> {
  const started = Date.now();
  const ranges: WorkflowRecord[][] = [];
  let collected = 0;
  let read = 0;
  let end = fill.before;
  while (current() && end > fill.first && collected < t.recent.room) {
    const start = Math.max(fill.first, end - (t.recent.room - collected));
    const rows: WorkflowRecord[] = [];
    for await (const { value } of t.ledger.entries({ fromRevision: start, beforeRevision: end })) {
      read += 1;
      // Running past the longest deadline cannot happen, but a timer costs nothing if it did.
      if (!isTerminalStatus(value.status)) t.track(value);
      rows.push(value);
      if (read % 1000 === 0) await new Promise((resolve) => setImmediate(resolve));
      if (!current()) return;
    }
    ranges.push(rows);
    collected += rows.length;
    end = start;
  }
  if (!current()) return;
  t.recent.backfill(ranges.reverse().flat().map(toSummary), end <= fill.first);
  t.log.info({ read, listed: t.recent.size, complete: t.recent.complete, ms: Date.now() - started }, 'recent index filled from the older ledger');
}

function keepNewest(records: WorkflowRecord[], n: number): void {
  records.sort((a, b) => b.started_at.localeCompare(a.started_at));
  records.length = Math.min(records.length, n);
}
