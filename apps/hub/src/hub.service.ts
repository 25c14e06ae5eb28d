import { isRevisionConflict, isTransient, type Bus, type CountedEvents } from '@chorus/bus';
import {
  applyDeadline,
  applyDroppedDuplicate,
  applyEnvelope,
  HUB_AGENT,
  ledgerKey,
  toSummary,
  type Delivery,
  type StatusChange,
  type Transition,
  type WorkflowRecord,
} from '@chorus/correlation';
import {
  createEnvelope,
  deriveEnvelope,
  isTerminalStatus,
  workflowSubject,
  type DuplicateNotice,
  type Envelope,
  type StatusUpdatePayload,
} from '@chorus/envelope';
import type { Logger } from '@chorus/observability';
import { AgentStats } from './agent.stats';
import { DeadlineQueue } from './deadline.queue';
import { KeyedMutex } from './keyed.mutex';
import type { LedgerEntry, LedgerStore } from './ledger.store';
import { RecentIndex } from './recent.index';

const MAX_CONFLICT_RETRIES = 8;

/** Kinds of ledger events; their counts are the hub's totals. */
export const LEDGER_EVENTS = ['created', 'completed', 'failed', 'timed_out', 'cancelled', 'duplicate', 'late'] as const;

export interface HubServiceOptions {
  sweepIntervalMs: number;
  recentCapacity: number;
}

/**
 * The hub's work: apply each envelope to its workflow's record (pure transitions from
 * @chorus/correlation), announce status changes, count ledger events, persist with revision
 * checks, and time out workflows whose deadline passes. One workflow is handled by one task at a
 * time. Only the active hub (the lease holder) applies envelopes; every replica answers reads.
 */
export class HubService {
  private readonly mutex = new KeyedMutex();
  private readonly deadlines = new DeadlineQueue();
  readonly agentStats = new AgentStats();
  readonly recent: RecentIndex;
  private sweeper?: NodeJS.Timeout;
  private active = false;

  constructor(
    private readonly bus: Bus,
    private readonly ledger: LedgerStore,
    private readonly events: CountedEvents,
    private readonly log: Logger,
    private readonly options: HubServiceOptions,
  ) {
    this.recent = new RecentIndex(options.recentCapacity);
  }

  get isActive(): boolean {
    return this.active;
  }

  /** Becomes the active hub: rebuilds deadline timers and the recent index from the ledger. */
  async activate(): Promise<void> {
    this.ledger.clear();
    this.recent.clear();
    const newest: WorkflowRecord[] = [];
    let active = 0;
    let total = 0;
    for await (const { value } of this.ledger.entries()) {
      total += 1;
      if (!isTerminalStatus(value.status)) {
        this.deadlines.schedule(ledgerKey(value.tenant_id, value.correlation_id), Date.parse(value.deadline));
        active += 1;
      }
      newest.push(value);
      if (newest.length > this.options.recentCapacity * 2) keepNewest(newest, this.options.recentCapacity);
    }
    keepNewest(newest, this.options.recentCapacity);
    for (const r of newest.reverse()) this.recent.upsert(toSummary(r));
    if (total > newest.length) this.recent.markIncomplete();
    this.active = true;
    this.sweeper = setInterval(() => void this.sweep(), this.options.sweepIntervalMs);
    this.sweeper.unref();
    this.log.info({ active, total }, 'hub active: deadline timers and recent index rebuilt from the ledger');
  }

  deactivate(): void {
    this.active = false;
    if (this.sweeper) clearInterval(this.sweeper);
    this.ledger.clear();
  }

  /**
   * Records one envelope of the workflow stream. A NATS outage is waited out here, holding the
   * workflow's turn, so its envelopes are still applied in order once NATS is back.
   */
  async onEnvelope(envelope: Envelope, delivery: Delivery, log: Logger): Promise<void> {
    await this.mutex.run(ledgerKey(envelope.tenant_id, envelope.correlation_id), () =>
      retryTransient(
        () =>
          this.update(envelope.tenant_id, envelope.correlation_id, log, (current) => applyEnvelope(current, envelope, delivery, new Date()), {
            cause: envelope,
            eventId: `s${delivery.streamSeq}`,
          }),
        log,
      ),
    );
  }

  /** Counts a re-publish that the stream dropped (reported on `chorus.dup.…`). */
  async onDroppedDuplicate(notice: DuplicateNotice, noticeSeq: number): Promise<void> {
    const key = ledgerKey(notice.tenant_id, notice.correlation_id);
    await this.mutex.run(key, () =>
      this.update(
        notice.tenant_id,
        notice.correlation_id,
        this.log,
        (current) => {
          if (!current) throw new Error(`duplicate notice for ${key}, which the hub has not recorded yet; retrying`);
          return { record: applyDroppedDuplicate(current, new Date()), effect: 'duplicate', emits: [] };
        },
        { eventId: `n${noticeSeq}` },
      ),
    );
  }

  /**
   * The stored record, or null. On the active hub, waits for an update of the same workflow in
   * progress, whose status update may already be out while its save is not done yet.
   */
  find(tenantId: string, correlationId: string): Promise<WorkflowRecord | null> {
    if (!this.active) return this.ledger.read(tenantId, correlationId);
    return this.mutex.run(ledgerKey(tenantId, correlationId), async () => (await this.ledger.load(tenantId, correlationId))?.record ?? null);
  }

  get activeDeadlines(): number {
    return this.deadlines.size;
  }

  private async sweep(): Promise<void> {
    for (const key of this.deadlines.popDue(Date.now())) {
      const dot = key.indexOf('.');
      const tenantId = key.slice(0, dot);
      const correlationId = key.slice(dot + 1);
      try {
        if (await this.respondedInTime(tenantId, correlationId)) {
          // The response is in the stream, stored before the deadline; the hub is just behind.
          this.deadlines.schedule(key, Date.now() + 1000);
          continue;
        }
        await this.mutex.run(key, () =>
          this.update(tenantId, correlationId, this.log, (current) => (current ? applyDeadline(current, new Date()) : null), { eventId: 'deadline' }),
        );
      } catch (e) {
        this.log.error({ err: e, correlation_id: correlationId }, 'deadline sweep failed; will retry');
        this.deadlines.schedule(key, Date.now() + 1000);
      }
    }
  }

  /**
   * Whether the workflow's response was stored in the stream by its deadline. The deadline is about
   * when the responder answered, not about how soon the hub got to it: a hub catching up after an
   * outage must not time out a workflow that did finish in time.
   */
  private async respondedInTime(tenantId: string, correlationId: string): Promise<boolean> {
    const record = await this.ledger.load(tenantId, correlationId);
    if (!record || isTerminalStatus(record.record.status)) return false;
    const stored = await this.bus.lastStoredAt(workflowSubject(tenantId, 'response', correlationId));
    return stored !== null && stored.getTime() <= Date.parse(record.record.deadline);
  }

  /**
   * Load → transition → announce and count → save, retried on a concurrent write. Announcements and
   * counted events go out before the save: if the save is lost, the redelivered envelope yields the
   * same ones, and their ids make the streams drop the repeats.
   */
  private async update(
    tenantId: string,
    correlationId: string,
    log: Logger,
    transition: (current: WorkflowRecord | null) => Transition | null,
    context: { cause?: Envelope; eventId: string },
  ): Promise<Transition | null> {
    const key = ledgerKey(tenantId, correlationId);
    for (let attempt = 1; ; attempt++) {
      const stored: LedgerEntry | null = await this.ledger.load(tenantId, correlationId);
      const t = transition(stored?.record ?? null);
      if (!t || t.record === stored?.record) return t;
      await this.recordEvents(key, stored === null, t, context.eventId);
      for (const change of t.emits) await this.announce(t.record, change, log, context.cause);
      let saved: LedgerEntry;
      try {
        saved = await this.ledger.save(t.record, stored?.revision ?? 0);
      } catch (e) {
        if (isRevisionConflict(e) && attempt < MAX_CONFLICT_RETRIES) {
          log.debug({ effect: t.effect, revision: stored?.revision ?? 0, attempt }, 'ledger write conflict; retrying');
          continue;
        }
        throw e;
      }
      log.debug({ effect: t.effect, from: stored?.revision ?? 0, to: saved.revision, steps: t.record.steps.length }, 'ledger updated');
      if (isTerminalStatus(t.record.status)) this.deadlines.cancel(key);
      else this.deadlines.schedule(key, Date.parse(t.record.deadline));
      this.recent.upsert(toSummary(t.record));
      const newSteps = t.record.steps.length - (stored?.record.steps.length ?? 0);
      for (const step of t.record.steps.slice(t.record.steps.length - Math.max(0, newSteps))) {
        if (step.message_type !== 'query') this.agentStats.record(step.agent, step.duration_ms, step.status === 'error');
      }
      return t;
    }
  }

  private async recordEvents(key: string, created: boolean, t: Transition, eventId: string): Promise<void> {
    const tenant = t.record.tenant_id;
    const events: Array<Promise<void>> = [];
    if (created) events.push(this.events.record('created', tenant, `${key}.created`));
    for (const change of t.emits) events.push(this.events.record(change.status, tenant, `${key}.${change.status}`));
    if (t.effect === 'duplicate') events.push(this.events.record('duplicate', tenant, `${key}.duplicate.${eventId}`));
    if (t.effect === 'late') events.push(this.events.record('late', tenant, `${key}.late.${eventId}`));
    await Promise.all(events);
  }

  /** Publishes a `status_update`, caused by the envelope that changed the status (none for a timeout). */
  private async announce(record: WorkflowRecord, change: StatusChange, log: Logger, cause?: Envelope): Promise<void> {
    const payload: StatusUpdatePayload = {
      workflow_status: change.status,
      previous_status: change.previous,
      step: change.step,
      reason: change.reason,
      error: change.error,
    };
    const base = { messageType: 'status_update' as const, agent: HUB_AGENT, payload, nextSteps: [] };
    const update = cause
      ? deriveEnvelope(cause, base)
      : createEnvelope({ ...base, correlationId: record.correlation_id, tenantId: record.tenant_id, deadline: record.deadline });
    await this.bus.publish(update, { part: change.status, reportDuplicate: false });
    log.info({ correlation_id: record.correlation_id, status: change.status, reason: change.reason }, `workflow ${change.status}`);
  }
}

/** Retries an operation while it fails for reasons NATS recovers from (about half a minute in all). */
async function retryTransient<T>(op: () => Promise<T>, log: Logger, attempts = 12): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await op();
    } catch (e) {
      if (attempt >= attempts || !isTransient(e)) throw e;
      const delay = Math.min(5000, 100 * 2 ** (attempt - 1));
      log.warn({ err: e, attempt, retry_in_ms: delay }, 'ledger update failed; NATS may be away, retrying');
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}

function keepNewest(records: WorkflowRecord[], n: number): void {
  records.sort((a, b) => b.started_at.localeCompare(a.started_at));
  records.length = Math.min(records.length, n);
}
