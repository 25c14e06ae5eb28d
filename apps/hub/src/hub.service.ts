import { isRevisionConflict, isTransient, retryTransient, type Bus, type CountedEvents } from '@chorus/bus';
import {
  applyDeadline,
  applyDroppedDuplicate,
  applyEnvelope,
  isRetryCommand,
  ledgerKey,
  recordAnnouncement,
  retryWouldStart,
  toSummary,
  type Delivery,
  type Transition,
  type WorkflowRecord,
} from '@chorus/correlation';
import { isTerminalStatus, type DuplicateNotice, type Envelope } from '@chorus/envelope';
import type { Logger } from '@chorus/observability';
import { HubNotActiveError, WorkflowNotRecordedYetError } from './hub.errors';
import { AgentStats, TenantAgentStats } from './agent.stats';
import { announce, announcedBefore, causeAgeMs, type Cause } from './announced-before';
import { DeadlineSweeper, type DeadlineSweeperOptions } from './deadline.sweeper';
import { KeyedMutex } from './keyed.mutex';
import { fillRecentIndexPatiently, readTakeoverWindow, type TakeoverTarget } from './ledger.takeover';
import type { LedgerEntry, LedgerStore } from './ledger.store';
import { RecentIndex } from './recent.index';
import { RetryStarter } from './retry.starter';
import { StrayEnvelopes } from './stray.envelopes';

const MAX_CONFLICT_RETRIES = 8;

/** Kinds of ledger events; their counts are the hub's totals. */
export const LEDGER_EVENTS = ['created', 'completed', 'failed', 'timed_out', 'cancelled', 'duplicate', 'late', 'retried'] as const;

/** What queued a change: the envelope (and when the stream stored it), and the id its counted events carry. */
type UpdateContext = Cause & { eventId: string };

interface QueuedUpdate {
  transition: (current: WorkflowRecord | null) => Transition | null | Promise<Transition | null>;
  context: UpdateContext;
  log: Logger;
  resolve: (t: Transition | null) => void;
  reject: (error: unknown) => void;
}

type Outcome = { transition: Transition | null } | { error: unknown };

/** `clockSkewMs` also sets how much earlier than the longest deadline before the ledger's last write a takeover starts reading it. */
export interface HubServiceOptions extends DeadlineSweeperOptions {
  /** How long a running workflow's ledger write waits for the workflow's next envelopes (0: never). */
  lingerMs: number;
  recentCapacity: number;
  /** How long the ledger keeps a workflow after its last update (CHORUS_HUB_RETENTION_MS). */
  retentionMs: number;
  /**
   * Whether this replica's lease cannot have expired (LeaderLease.holds); absent: it always can
   * write while active. Checked before each batch is applied and again before it is saved.
   */
  holdsLease?: () => boolean;
  /**
   * Whether this replica still holds the lease while {@link holdsLease} says it cannot be sure to
   * (its renewal is late, not refused: LeaderLease.isLeader and not holds). A batch then waits for
   * the renewal's outcome instead of being handed back: handed back, it came again after the
   * workflow's next envelopes, which this same hub, renewed a moment later, had applied first.
   */
  renewingLease?: () => boolean;
}

/** What a batch comes to when the lease ran out under it: nothing written, every envelope left for the active hub. */
const NOT_ACTIVE = Symbol('not active');

/**
 * The hub's work: apply each envelope to its workflow's record (pure transitions from
 * @chorus/correlation), announce status changes, count ledger events, persist with revision
 * checks, and time out workflows whose deadline passes ({@link DeadlineSweeper}). One workflow
 * is handled by one task at a time. Only the active hub (the lease holder) applies envelopes;
 * every replica answers reads.
 */
export class HubService {
  private readonly mutex = new KeyedMutex();
  private readonly queued = new Map<string, QueuedUpdate[]>();
  private readonly wakers = new Map<string, () => void>();
  private readonly timeouts: DeadlineSweeper;
  readonly agentStats = new AgentStats();
  /** The same, per tenant: what a tenant's own view of the stats shows. */
  readonly tenantAgentStats = new TenantAgentStats();
  /** Ledger writes, and the transitions they stored (several per write when they queue up together). */
  readonly writes = { records: 0, transitions: 0 };
  /** Status updates and commands of a workflow the ledger has no record of: left out of it. */
  readonly strays: StrayEnvelopes;
  readonly recent: RecentIndex;
  private readonly retries: RetryStarter;
  private active = false;
  /** Counts activations and deactivations: a background fill of an earlier activation stops. */
  private generation = 0;

  constructor(
    private readonly bus: Bus,
    private readonly ledger: LedgerStore,
    private readonly events: CountedEvents,
    private readonly log: Logger,
    private readonly options: HubServiceOptions,
  ) {
    this.recent = new RecentIndex(options.recentCapacity);
    this.retries = new RetryStarter(bus, log);
    this.timeouts = new DeadlineSweeper(bus, ledger, log, options);
    this.strays = new StrayEnvelopes(bus, options.retentionMs);
  }

  get isActive(): boolean {
    return this.active;
  }

  /** Active, and its lease cannot have run out: only then is the ledger written. */
  private mayWrite(): boolean {
    return this.active && (this.options.holdsLease?.() ?? true);
  }

  /**
   * Whether the ledger may be written, once a lease renewal that is late has come through: true
   * when it did, false when the lease was lost (or this hub stood down) meanwhile. A renewal that
   * succeeds is revision-checked, so no other replica held the lease in between.
   */
  private async mayWriteOnceRenewed(): Promise<boolean> {
    while (this.active && !this.mayWrite() && (this.options.renewingLease?.() ?? false)) await new Promise((r) => setTimeout(r, 20));
    return this.mayWrite();
  }

  /** Becomes the active hub: rebuilds deadline timers and the recent index from the ledger. */
  async activate(): Promise<void> {
    const generation = ++this.generation;
    this.ledger.clear();
    this.recent.clear();
    const target: TakeoverTarget = {
      ledger: this.ledger,
      recent: this.recent,
      recentCapacity: this.options.recentCapacity,
      log: this.log,
      track: (record) => this.timeouts.track(record),
    };
    const { active, read, whole, since, fill } = await readTakeoverWindow(target, this.options.maxDeadlineMs + this.options.clockSkewMs);
    this.active = true;
    this.timeouts.start((tenantId, correlationId) => this.timeOut(tenantId, correlationId));
    this.log.info({ active, read, whole_ledger: whole, since: since?.toISOString() }, 'hub active: deadline timers and recent index rebuilt from the ledger');
    if (fill) void fillRecentIndexPatiently(target, fill, () => this.generation === generation && this.active);
  }

  deactivate(): void {
    this.generation += 1;
    this.active = false;
    this.timeouts.stop();
    this.ledger.clear();
  }

  /**
   * Records one envelope of the workflow stream. A NATS outage is waited out here, holding the
   * workflow's turn, so its envelopes are still applied in order once NATS is back.
   */
  onEnvelope(envelope: Envelope, delivery: Delivery, log: Logger, storedAt?: () => number): Promise<Transition | null> {
    const apply = async (current: WorkflowRecord | null, retrySource?: Envelope | null) => {
      if (StrayEnvelopes.isStray(envelope, current)) return this.strays.leaveOut(envelope, delivery.streamSeq, log);
      const t = applyEnvelope(current, envelope, delivery, new Date(), { retrySource });
      // The record shows the deadline the hub holds the workflow to from its query on, not only once
      // it times out: watchers and clients time their waits by it.
      const held = t.record === current ? t.record : this.timeouts.heldToMaxDeadline(t.record);
      return held === t.record ? t : { ...t, record: held };
    };
    // A retry runs the workflow's own query again, read from the stream in the workflow's turn.
    const transition = isRetryCommand(envelope)
      ? async (current: WorkflowRecord | null) => apply(current, retryWouldStart(current) ? await this.retries.ranQuery(current) : null)
      : apply;
    return this.update(envelope.tenant_id, envelope.correlation_id, log, transition, { cause: envelope, causeStoredAt: storedAt, eventId: `s${delivery.streamSeq}` });
  }

  /** Counts a re-publish that the stream dropped (reported on `chorus.dup.…`). */
  async onDroppedDuplicate(notice: DuplicateNotice, noticeSeq: number): Promise<void> {
    const key = ledgerKey(notice.tenant_id, notice.correlation_id);
    await this.update(
      notice.tenant_id,
      notice.correlation_id,
      this.log,
      (current) => {
        if (!current) throw new Error(`duplicate notice for ${key}, which the hub has not recorded yet; retrying`);
        return { record: applyDroppedDuplicate(current, new Date()), effect: 'duplicate', emits: [] };
      },
      { eventId: `n${noticeSeq}` },
    );
  }

  /** The tenant of a workflow being updated now (its first write may not be done): a few dozen to look through. */
  updatingTenantOf(correlationId: string): string | undefined {
    const suffix = `.${correlationId}`;
    for (const key of this.queued.keys()) if (key.endsWith(suffix)) return key.slice(0, key.length - suffix.length);
    return undefined;
  }

  /**
   * The stored record, or null. On the active hub, waits for an update of the same workflow in
   * progress, whose status update may already be out while its save is not done yet.
   */
  find(tenantId: string, correlationId: string): Promise<WorkflowRecord | null> {
    if (!this.active) return this.ledger.read(tenantId, correlationId);
    return this.mutex.run(ledgerKey(tenantId, correlationId), async () => (await this.ledger.load(tenantId, correlationId))?.record ?? null);
  }

  /** Applies the deadline that has passed to the workflow's record (held to the longest deadline). */
  private async timeOut(tenantId: string, correlationId: string): Promise<void> {
    await this.update(tenantId, correlationId, this.log, (current) => (current ? applyDeadline(this.timeouts.heldToMaxDeadline(current), new Date()) : null), {
      eventId: 'deadline',
    });
  }

  /**
   * Queues a transition of one workflow. Transitions of a workflow are applied one at a time, in
   * order; those that queue up while the workflow's previous write is in flight are applied
   * together and written once (group commit), and each resolves once the write that holds it is
   * done: an envelope is acknowledged only after its effect is stored.
   */
  private update(
    tenantId: string,
    correlationId: string,
    log: Logger,
    transition: QueuedUpdate['transition'],
    context: UpdateContext,
  ): Promise<Transition | null> {
    const key = ledgerKey(tenantId, correlationId);
    return new Promise((resolve, reject) => {
      const item: QueuedUpdate = { transition, context, log, resolve, reject };
      const queue = this.queued.get(key);
      if (queue) {
        queue.push(item);
        this.wakers.get(key)?.();
        return;
      }
      this.queued.set(key, [item]);
      void this.mutex.run(key, () => this.drain(tenantId, correlationId, key));
    });
  }

  /**
   * Applies and writes the workflow's queued transitions, batch after batch, until none are left.
   * A batch that leaves the workflow running lingers up to `lingerMs` to take in the workflow's
   * next envelopes, so one write stores several; a transition's announcements never wait, and a
   * finished workflow is written at once.
   */
  private async drain(tenantId: string, correlationId: string, key: string): Promise<void> {
    for (;;) {
      let batch = this.take(key);
      if (batch.length === 0) {
        this.queued.delete(key);
        return;
      }
      try {
        const outcomes = await retryTransient(async () => {
          for (let attempt = 1; ; attempt++) {
            if (!(await this.mayWriteOnceRenewed())) return NOT_ACTIVE;
            const assumeNew = attempt === 1 && this.isFreshQuery(batch[0].context);
            const stored: LedgerEntry | null = await this.ledger.load(tenantId, correlationId, { assumeNew });
            const base = stored?.record ?? null;
            let applied = await this.apply(key, base, batch);
            const lingerUntil = Date.now() + this.options.lingerMs;
            while (applied.current !== base && applied.current !== null && !isTerminalStatus(applied.current.status) && Date.now() < lingerUntil) {
              await this.waitForMore(key, lingerUntil - Date.now());
              const more = this.take(key);
              if (more.length === 0) continue;
              batch = [...batch, ...more];
              const next = await this.apply(key, applied.current, more);
              applied = { current: next.current, outcomes: [...applied.outcomes, ...next.outcomes] };
            }
            if (applied.current === null || applied.current === base) return applied.outcomes;
            // A replica that stalled while applying (its lease ran out meanwhile) must not save over
            // what the active hub, which took over, writes and indexes.
            if (!(await this.mayWriteOnceRenewed())) return NOT_ACTIVE;
            try {
              await this.persist(stored, applied.current, batch.length, batch[0].log);
              return applied.outcomes;
            } catch (e) {
              if (!isRevisionConflict(e) || attempt >= MAX_CONFLICT_RETRIES) throw e;
              batch[0].log.debug({ revision: stored?.revision ?? 0, attempt }, 'ledger write conflict; applying again');
            }
          }
        }, batch[0].log, 'ledger update');
        if (outcomes === NOT_ACTIVE) {
          batch[0].log.warn({ envelopes: batch.length }, 'lease ran out while applying: nothing written, left to the active hub');
          for (const item of batch) item.reject(new HubNotActiveError());
          continue;
        }
        outcomes.forEach((outcome, i) => ('error' in outcome ? batch[i].reject(outcome.error) : batch[i].resolve(outcome.transition)));
      } catch (e) {
        for (const item of batch) item.reject(e);
      }
    }
  }

  /** The workflow's queued transitions, taken off its queue (new ones queue behind them). */
  private take(key: string): QueuedUpdate[] {
    const batch = this.queued.get(key) ?? [];
    if (batch.length > 0) this.queued.set(key, []);
    return batch;
  }

  /** Resolves after `ms`, or as soon as a transition of the workflow is queued. */
  private waitForMore(key: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakers.delete(key);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      this.wakers.set(key, done);
    });
  }

  /**
   * Transitions each, in order → counts and announces what changed. Announcements and counted
   * events go out before the save: if the save is lost, the redelivered envelopes yield the same
   * ones, and their ids make the streams drop the repeats. A transition that throws fails alone.
   */
  private async apply(key: string, base: WorkflowRecord | null, batch: QueuedUpdate[]): Promise<{ current: WorkflowRecord | null; outcomes: Outcome[] }> {
    let current = base;
    const outcomes: Outcome[] = [];
    for (const item of batch) {
      let t: Transition | null;
      try {
        t = await item.transition(current);
        if (t?.retry) t = await this.retries.start(t, item.log);
      } catch (error) {
        // NATS away while a retry reads or publishes: the whole batch waits it out, keeping the turn.
        // (An envelope waiting for its workflow's query fails alone: the query comes after it.)
        if (isTransient(error) && !(error instanceof WorkflowNotRecordedYetError)) throw error;
        outcomes.push({ error });
        continue;
      }
      outcomes.push({ transition: t });
      if (!t || t.record === current) continue;
      // The counted events and the announcement go out together (one round trip, not two): both are
      // acknowledged before the save, and a client that confirms the end with the hub waits for it.
      let record = t.record;
      const earlier = await announcedBefore(this.bus, t.record, t.emits, item.context);
      const announced = async () => {
        for (const change of t.emits) {
          const stored = earlier.get(change.status);
          if (stored) item.log.info({ status: change.status, seq: stored.seq }, 'already announced (by a hub before a takeover, beyond the duplicate window): not again');
          record = stored ? recordAnnouncement(record, stored.envelope, { idempotencyKey: stored.key, streamSeq: stored.seq }) : await announce(this.bus, record, change, item.log, item.context.cause);
        }
      };
      await Promise.all([this.recordEvents(key, current === null, t, item.context.eventId, new Set(earlier.keys())), announced()]);
      current = record;
    }
    return { current, outcomes };
  }

  /** Saves the record if nobody wrote it since `stored`, then updates timers, the index and agent stats. */
  private async persist(stored: LedgerEntry | null, record: WorkflowRecord, applied: number, log: Logger): Promise<void> {
    const saved = await this.ledger.save(record, stored?.revision ?? 0, log);
    this.writes.records += 1;
    this.writes.transitions += applied;
    log.debug({ applied, from: stored?.revision ?? 0, to: saved.revision, steps: record.steps.length }, 'ledger updated');
    this.timeouts.track(record);
    this.recent.upsert(toSummary(saved.record));
    // New steps are mostly appended, but one applied after the end it was stored before goes in its place.
    const had = new Set(stored?.record.steps.map((s) => s.step));
    for (const step of record.steps.filter((s) => !had.has(s.step))) {
      if (step.message_type === 'query') continue;
      this.agentStats.record(step.agent, step.duration_ms, step.status === 'error');
      this.tenantAgentStats.record(record.tenant_id, step.agent, step.duration_ms, step.status === 'error');
    }
  }

  /**
   * A query published well inside the streams' duplicate window is almost always a new workflow's
   * first envelope, so its record is not looked up before it is created. Were it not new, the
   * create fails and the batch is applied again to the stored record; the events it counted
   * meanwhile carry the same ids as the first time and the streams drop them, which holds only
   * inside the window, hence "fresh".
   */
  private isFreshQuery(context: UpdateContext): boolean {
    return context.cause?.message_type === 'query' && causeAgeMs(context) < this.bus.options.duplicateWindowMs / 2;
  }

  /** Counts the transition's events; a status in `announced` was counted with its first announcement. */
  private async recordEvents(key: string, created: boolean, t: Transition, eventId: string, announced: ReadonlySet<string>): Promise<void> {
    const tenant = t.record.tenant_id;
    const events: Array<Promise<void>> = [];
    if (created) events.push(this.events.record('created', tenant, `${key}.created`));
    for (const change of t.emits) if (!announced.has(change.status)) events.push(this.events.record(change.status, tenant, `${key}.${change.status}`));
    if (t.effect === 'duplicate') events.push(this.events.record('duplicate', tenant, `${key}.duplicate.${eventId}`));
    if (t.effect === 'late') events.push(this.events.record('late', tenant, `${key}.late.${eventId}`));
    if (t.retry) events.push(this.events.record('retried', tenant, `${key}.retried`));
    await Promise.all(events);
  }
}
