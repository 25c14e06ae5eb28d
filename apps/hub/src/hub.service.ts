import { isRevisionConflict, type Bus } from '@chorus/bus';
import {
  applyDeadline,
  applyDroppedDuplicate,
  applyEnvelope,
  HUB_AGENT,
  ledgerKey,
  type Delivery,
  type StatusChange,
  type Transition,
  type WorkflowRecord,
} from '@chorus/correlation';
import {
  createEnvelope,
  deriveEnvelope,
  isTerminalStatus,
  type DuplicateNotice,
  type Envelope,
  type StatusUpdatePayload,
} from '@chorus/envelope';
import type { Logger } from '@chorus/observability';
import { DeadlineQueue } from './deadline.queue';
import { HubCounters } from './hub.counters';
import { KeyedMutex } from './keyed.mutex';
import type { LedgerEntry, LedgerStore } from './ledger.store';

const MAX_CONFLICT_RETRIES = 8;

/**
 * The hub's work: apply each envelope to its workflow's record (pure transitions from
 * @chorus/correlation), announce status changes, persist with revision checks, and time out
 * workflows whose deadline passes. One workflow is handled by one task at a time.
 */
export class HubService {
  private readonly mutex = new KeyedMutex();
  private readonly deadlines = new DeadlineQueue();
  readonly counters = new HubCounters();
  private sweeper?: NodeJS.Timeout;

  constructor(
    private readonly bus: Bus,
    private readonly ledger: LedgerStore,
    private readonly log: Logger,
    private readonly sweepIntervalMs: number,
  ) {}

  /** Rebuilds the deadline timers from the ledger, then starts sweeping. */
  async start(): Promise<void> {
    let active = 0;
    for await (const { value } of this.ledger.entries()) {
      if (!isTerminalStatus(value.status)) {
        this.deadlines.schedule(ledgerKey(value.tenant_id, value.correlation_id), Date.parse(value.deadline));
        active += 1;
      }
    }
    this.log.info({ active }, 'deadline timers rebuilt from the ledger');
    this.sweeper = setInterval(() => void this.sweep(), this.sweepIntervalMs);
    this.sweeper.unref();
  }

  stop(): void {
    if (this.sweeper) clearInterval(this.sweeper);
  }

  /** Records one envelope of the workflow stream. */
  onEnvelope(envelope: Envelope, delivery: Delivery, log: Logger): Promise<void> {
    const key = ledgerKey(envelope.tenant_id, envelope.correlation_id);
    return this.mutex.run(key, () =>
      this.update(envelope.tenant_id, envelope.correlation_id, log, (current) =>
        applyEnvelope(current, envelope, delivery, new Date()),
      envelope),
    ).then((t) => {
      if (t) this.counters.record(t);
    });
  }

  /** Counts a re-publish that the stream dropped. */
  onDroppedDuplicate(notice: DuplicateNotice): Promise<void> {
    const key = ledgerKey(notice.tenant_id, notice.correlation_id);
    return this.mutex
      .run(key, () =>
        this.update(notice.tenant_id, notice.correlation_id, this.log, (current) => {
          if (!current) throw new Error(`duplicate notice for unknown workflow ${key}; retrying after its envelopes`);
          return { record: applyDroppedDuplicate(current, new Date()), effect: 'duplicate', emits: [] };
        }),
      )
      .then((t) => {
        if (t) this.counters.record(t);
      });
  }

  /**
   * The stored record, or null. Waits for an update of the same workflow in progress here, whose
   * status update may already be out while its save is not done yet.
   */
  find(tenantId: string, correlationId: string): Promise<WorkflowRecord | null> {
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
        const t = await this.mutex.run(key, () =>
          this.update(tenantId, correlationId, this.log, (current) => {
            if (!current) return null;
            return applyDeadline(current, new Date());
          }),
        );
        if (t) this.counters.record(t);
      } catch (e) {
        this.log.error({ err: e, correlation_id: correlationId }, 'deadline sweep failed; will retry');
        this.deadlines.schedule(key, Date.now() + 1000);
      }
    }
  }

  /**
   * Load → transition → announce → save, retried on a concurrent write. Status updates go out
   * before the save: if the save is lost, the redelivered envelope yields the same updates, and
   * their idempotency keys make the stream drop the repeat.
   */
  private async update(
    tenantId: string,
    correlationId: string,
    log: Logger,
    transition: (current: WorkflowRecord | null) => Transition | null,
    cause?: Envelope,
  ): Promise<Transition | null> {
    for (let attempt = 1; ; attempt++) {
      const stored: LedgerEntry | null = await this.ledger.load(tenantId, correlationId);
      const t = transition(stored?.record ?? null);
      if (!t || t.record === stored?.record) return t;
      for (const change of t.emits) await this.announce(t.record, change, log, cause);
      try {
        await this.ledger.save(t.record, stored?.revision ?? 0);
      } catch (e) {
        if (isRevisionConflict(e) && attempt < MAX_CONFLICT_RETRIES) continue;
        throw e;
      }
      const key = ledgerKey(tenantId, correlationId);
      if (isTerminalStatus(t.record.status)) this.deadlines.cancel(key);
      else this.deadlines.schedule(key, Date.parse(t.record.deadline));
      return t;
    }
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
    await this.bus.publish(update, { part: change.status });
    log.info({ correlation_id: record.correlation_id, status: change.status, reason: change.reason }, `workflow ${change.status}`);
  }
}
