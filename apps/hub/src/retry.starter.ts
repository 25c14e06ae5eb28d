import { isTransient, type Bus } from '@chorus/bus';
import { HUB_AGENT, queryStreamSeq, retryNotStarted, type Transition, type WorkflowRecord } from '@chorus/correlation';
import { createEnvelope, parseEnvelope, QUERY_NEXT_STEPS, workflowSubject, type Envelope } from '@chorus/envelope';
import { unbound, type Logger } from '@chorus/observability';

/**
 * The hub's side effects of a retry (an `orchestration_command` `retry`, docs/hub.md#retry): reading
 * the query the retried workflow ran, and publishing it under the retry's id. The decision is the
 * pure transition's (`applyEnvelope` of @chorus/correlation); both run in the workflow's turn.
 */
export class RetryStarter {
  constructor(
    private readonly bus: Bus,
    private readonly log: Logger,
  ) {}

  /**
   * The query the workflow ran, as the stream holds it: the copy its record names, else the last on
   * its subject; null when the stream holds none (or cannot be read for good: the retry is refused).
   */
  async ranQuery(record: WorkflowRecord): Promise<Envelope | null> {
    const subject = workflowSubject(record.tenant_id, 'query', record.correlation_id);
    try {
      const seq = queryStreamSeq(record);
      const stored = (seq === null ? null : await this.bus.storedAt(seq)) ?? (await this.bus.lastStoredMessage(subject));
      const parsed = stored ? parseEnvelope(stored.data, { subject }) : null;
      return parsed?.ok ? parsed.value : null;
    } catch (e) {
      if (isTransient(e)) throw e;
      this.log.warn({ err: e, correlation_id: record.correlation_id }, 'the query of a workflow to retry could not be read');
      return null;
    }
  }

  /**
   * Publishes the query of the retry the transition started, caused by the command that asked for
   * it, before the retried workflow's record (which names it) is saved: a lost save redelivers the
   * command, and the query is stored only if its subject holds none yet, so it exists once however
   * late that comes. A query that cannot be published for good (too large for a message once it
   * names what it retries, say) refuses the retry instead; a transient failure throws (redelivery).
   */
  async start(t: Transition, log: Logger): Promise<Transition> {
    const retry = t.retry!;
    const query = {
      ...createEnvelope({
        messageType: 'query',
        correlationId: retry.correlation_id,
        tenantId: retry.tenant_id,
        agent: HUB_AGENT,
        status: 'pending',
        deadline: retry.deadline,
        nextSteps: [...QUERY_NEXT_STEPS],
        traceparent: retry.command.traceparent,
        payload: retry.payload,
      }),
      causation_id: retry.command.message_id,
    };
    try {
      const checked = parseEnvelope(JSON.parse(JSON.stringify(query)));
      if (!checked.ok) throw checked.error;
      const published = await this.bus.publish(query, { reportDuplicate: false, firstOnSubject: true });
      log.info({ ...unbound(log, { correlation_id: retry.payload.retry_of }), retried_as: retry.correlation_id, by: retry.command.agent, already_stored: published.duplicate }, 'workflow retried');
      return t;
    } catch (e) {
      if (isTransient(e)) throw e;
      log.warn({ err: e, ...unbound(log, { correlation_id: retry.payload.retry_of }) }, 'retry not started');
      return retryNotStarted(t, (e as Error).message);
    }
  }
}
