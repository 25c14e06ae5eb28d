import type { Bus } from '@chorus/bus';
import { startsRecord } from '@chorus/correlation';
import { parseEnvelope, workflowSubject, type Envelope } from '@chorus/envelope';
import { LogThrottle, type Logger } from '@chorus/observability';
import { WorkflowNotRecordedYetError } from './hub.errors';

/**
 * Status updates and commands of a workflow the ledger does not hold (an id nobody submitted,
 * another tenant's, or one forgotten after its retention): left out of the ledger, counted, and
 * logged (at most ten lines a minute: anyone on the bus can send them). Recorded, a stray cancel or
 * failure report listed a workflow with no query, counted as created and ended. Work an agent
 * publishes (a plan, say) still starts a record: a client may start a choreography past its first steps.
 */
export class StrayEnvelopes {
  /** Left out since this hub started. */
  count = 0;
  private readonly lines = new LogThrottle(10, 60_000);

  constructor(
    private readonly bus: Bus,
    /** How long the ledger keeps a workflow after its last update (CHORUS_HUB_RETENTION_MS). */
    private readonly retentionMs: number,
  ) {}

  /** Whether `envelope` is about a workflow and would need its record, which the ledger does not have. */
  static isStray(envelope: Envelope, current: unknown): boolean {
    return current === null && !startsRecord(envelope.message_type);
  }

  /**
   * Leaves a stray out; unless its query is in the stream, recent enough to be in the ledger: then
   * the hub has not recorded it yet (its write failed and it comes again), and the stray waits for it
   * ({@link WorkflowNotRecordedYetError}, retried).
   */
  async leaveOut(envelope: Envelope, streamSeq: number, log: Logger): Promise<null> {
    const subject = workflowSubject(envelope.tenant_id, 'query', envelope.correlation_id);
    const query = await this.bus.lastStoredMessage(subject);
    // Only a valid query: one that was dead-lettered will never be recorded, and a stray must not wait for it.
    if (query && Date.now() - query.time.getTime() < this.retentionMs && parseEnvelope(query.data, { subject }).ok) {
      throw new WorkflowNotRecordedYetError(envelope.correlation_id);
    }
    this.count += 1;
    // The envelope's logger names its type and ids already.
    const { write, suppressed } = this.lines.take();
    if (write) log.warn({ from: envelope.agent, stream_seq: streamSeq, ...(suppressed > 0 ? { not_logged_before: suppressed } : {}) }, 'status update or command of a workflow the hub has no record of: not recorded');
    return null;
  }
}
