import type { Bus } from '@chorus/bus';
import { ledgerKey, type WorkflowRecord } from '@chorus/correlation';
import { isTerminalStatus } from '@chorus/envelope';
import type { Logger } from '@chorus/observability';
import { DeadlineQueue } from './deadline.queue';
import type { LedgerStore } from './ledger.store';
import { endStoredBy, hubConsumerInfo, type ConsumerInfo } from './stored-end';

/** How long past a deadline the sweep waits for an end stored in time to be applied (see endedInTime). */
const ENDED_IN_TIME_PATIENCE_MS = 5 * 60_000;
/** When a due workflow is looked at again after it could not be timed out yet. */
const RECHECK_MS = 1000;

export interface DeadlineSweeperOptions {
  /** The longest a workflow may run (CHORUS_MAX_DEADLINE_MS); see {@link DeadlineSweeper.deadlineOf}. */
  maxDeadlineMs: number;
  /** How far apart the processes' clocks may be (CHORUS_HUB_CLOCK_SKEW_MS). */
  clockSkewMs: number;
  /** How often due deadlines are looked for. */
  sweepIntervalMs: number;
}

/** Times out one workflow: applies the deadline to its record in the workflow's turn. */
export type TimeOut = (tenantId: string, correlationId: string) => Promise<void>;

/**
 * The active hub's timeouts: a timer per running workflow (its deadline, held to the longest one),
 * and a sweep that times out the workflows whose deadline has passed, unless what ended them in
 * time is already in the stream, still to be applied.
 */
export class DeadlineSweeper {
  private readonly queue: DeadlineQueue;
  private sweeper?: NodeJS.Timeout;
  /** When this hub last became the active one. */
  private activatedAt = 0;

  constructor(
    private readonly bus: Bus,
    private readonly ledger: LedgerStore,
    private readonly log: Logger,
    private readonly options: DeadlineSweeperOptions,
  ) {
    this.queue = new DeadlineQueue(log);
  }

  /** Starts sweeping (the hub became active); `timeOut` applies a deadline that has passed. */
  start(timeOut: TimeOut): void {
    this.stop();
    this.activatedAt = Date.now();
    this.sweeper = setInterval(() => void this.sweep(timeOut), this.options.sweepIntervalMs);
    this.sweeper.unref();
  }

  stop(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  /** Sets the workflow's timer from its stored record; a finished workflow has none. */
  track(record: WorkflowRecord): void {
    const key = ledgerKey(record.tenant_id, record.correlation_id);
    if (isTerminalStatus(record.status)) this.queue.cancel(key);
    else this.queue.schedule(key, this.deadlineOf(record));
  }

  /**
   * When the hub times the workflow out: its deadline, but never later than the longest deadline
   * (CHORUS_MAX_DEADLINE_MS) after it started. The ingress refuses longer ones; an envelope
   * published straight to the stream with a later deadline is held to it too, which is what lets
   * the hub's takeover read only the recent part of the ledger.
   */
  deadlineOf(record: WorkflowRecord): number {
    return Math.min(Date.parse(record.deadline), Date.parse(record.started_at) + this.options.maxDeadlineMs);
  }

  /** The record with the deadline the hub holds it to, when that is earlier than its own. */
  heldToMaxDeadline(record: WorkflowRecord): WorkflowRecord {
    if (isTerminalStatus(record.status)) return record;
    const deadline = this.deadlineOf(record);
    return deadline < Date.parse(record.deadline) ? { ...record, deadline: new Date(deadline).toISOString() } : record;
  }

  private async sweep(timeOut: TimeOut): Promise<void> {
    // One read of the hub consumer's state per sweep, whatever the number of workflows due (a takeover times out many at once).
    let consumer: Promise<ConsumerInfo> | undefined;
    const consumerInfo = () => (consumer ??= hubConsumerInfo(this.bus));
    for (const key of this.queue.popDue(Date.now())) {
      const dot = key.indexOf('.');
      const tenantId = key.slice(0, dot);
      const correlationId = key.slice(dot + 1);
      try {
        if (await this.endedInTime(tenantId, correlationId, consumerInfo)) {
          // What ended it is in the stream, stored before the deadline; the hub is just behind.
          this.queue.schedule(key, Date.now() + RECHECK_MS);
          continue;
        }
        await timeOut(tenantId, correlationId);
      } catch (e) {
        this.log.error({ err: e, correlation_id: correlationId }, 'deadline sweep failed; will retry');
        this.queue.schedule(key, Date.now() + RECHECK_MS);
      }
    }
  }

  /**
   * Whether what ended the workflow in time is in the stream, still to be applied ({@link endStoredBy}):
   * a hub catching up after an outage must not time out a workflow that ended before its deadline.
   * Such an end holds the timeout back at most five minutes past the deadline and this hub's takeover.
   */
  private async endedInTime(tenantId: string, correlationId: string, consumerInfo: () => Promise<ConsumerInfo>): Promise<boolean> {
    const loaded = await this.ledger.load(tenantId, correlationId);
    if (!loaded || isTerminalStatus(loaded.record.status)) return false;
    const record = loaded.record;
    const deadline = this.deadlineOf(record);
    if (!(await endStoredBy(this.bus, record, deadline, this.options.clockSkewMs, consumerInfo))) return false;
    // Found, but not applied minutes after the deadline and after this hub took over (time enough
    // to catch up): refused or lost. It no longer holds the timeout back.
    if (Date.now() - Math.max(deadline, this.activatedAt) > ENDED_IN_TIME_PATIENCE_MS) {
      this.log.warn({ correlation_id: correlationId, deadline: new Date(deadline).toISOString() }, 'an end stored before the deadline was never applied; timing the workflow out');
      return false;
    }
    return true;
  }
}
