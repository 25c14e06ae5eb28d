import { createHash } from 'node:crypto';
import type { JsMsg } from '@nats-io/jetstream';
import {
  ALL_WORKFLOW_SUBJECTS,
  ChorusError,
  INVALID_TOKEN,
  deriveEnvelope,
  idempotencyKey,
  isMessageType,
  parseEnvelope,
  parseTraceparent,
  parseWorkflowSubject,
  StepFailedError,
  toErrorDetails,
  workflowFilter,
  type Envelope,
  type MessageType,
  type WorkflowStatus,
} from '@chorus/envelope';
import { createEnvelopeLogger, unbound, type Logger } from '@chorus/observability';
import type { ConsumerOptions } from './bus.options';
import { createDeadLetter, deadLetterLimit, publishDeadLetter, type DeadLetterInput } from './dead-letter';
import { DurableConsumer } from './durable.consumer';
import { ChorusHeaders } from './headers';
import { setTimerAt } from './long-timer';
import { isTransient } from './transient-error';
import type { EnvelopeHandler, HandlerContext } from './handler.types';
import { toOutbound } from './handler.types';
import type { Bus } from './nats.bus';

/** Envelopes stored up to this long after a process began to listen for ends are looked up too. */
const LISTENING_MARGIN_MS = 2000;

/** Every message type, for a consumer (the hub's) that sees the whole workflow stream. */
export const ALL_MESSAGE_TYPES = '*';
export type ConsumerPattern = MessageType | typeof ALL_MESSAGE_TYPES;

/** The durable consumer name an agent's replicas share for one pattern. */
export function durableName(agent: string, pattern: ConsumerPattern): string {
  return `${agent}_${pattern === ALL_MESSAGE_TYPES ? 'all' : pattern}`;
}

/**
 * One agent's loop over one durable consumer: parse → child logger → handle → publish what the
 * handler returned → ack. Retryable failures are nak'ed with exponential backoff; a failure that
 * cannot be retried (or has used its deliveries) is reported on the workflow as a `status_update`
 * with status `error`, dead-lettered and terminated. Invalid envelopes are dead-lettered with
 * their validation errors and never reach the handler.
 */
export class JetStreamConsumer {
  private readonly loop: DurableConsumer;
  readonly durable: string;
  /** `agent` for each envelope's log lines, unless the app's logger binds it already (pino would write it twice). */
  private readonly agentBinding: { agent?: string };

  constructor(
    private readonly bus: Bus,
    pattern: ConsumerPattern,
    private readonly options: ConsumerOptions,
    private readonly handler: EnvelopeHandler,
    private readonly log: Logger,
  ) {
    this.durable = durableName(options.agent, pattern);
    this.agentBinding = unbound(log, { agent: options.agent });
    this.loop = new DurableConsumer(
      bus,
      {
        stream: bus.options.workflowStream,
        durable: this.durable,
        filter: pattern === ALL_MESSAGE_TYPES ? ALL_WORKFLOW_SUBJECTS : workflowFilter({ messageType: pattern }),
        ackWaitMs: options.ackWaitMs,
        maxDeliver: options.maxDeliver,
        concurrency: options.concurrency,
        resumeInOrder: options.resumeInOrder,
        maxAckPending: options.maxAckPending,
      },
      (m) => this.process(m),
      log,
    );
  }

  start(): Promise<void> {
    return this.loop.start();
  }

  /** Stops pulling, lets in-flight handlers finish (up to `graceMs`), then aborts them. */
  stop(graceMs = 5000): Promise<void> {
    return this.loop.stop(graceMs);
  }

  private async process(m: JsMsg): Promise<void> {
    const delivery = m.info.deliveryCount;
    const parsed = parseEnvelope(m.data, { subject: m.subject });
    if (!parsed.ok) {
      const errors = [...parsed.error.errors];
      await this.giveUp(m, () => this.deadLetter({ reason: 'invalid_envelope', subject: m.subject, streamSeq: m.seq, consumer: this.durable, data: m.data, deliveries: delivery, errors }));
      // Named by its subject's correlation id and tenant (what the dead letter records), so a search of the logs by id finds it.
      const parts = parseWorkflowSubject(m.subject);
      this.log.warn({ correlation_id: parts?.correlationId, tenant_id: parts?.tenantId, subject: m.subject, stream_seq: m.seq, errors }, 'invalid envelope dead-lettered');
      // A fixed set of labels: the subject's token is anyone's text (a label per token would grow without end).
      const token = m.subject.split('.')[3];
      this.count(isMessageType(token) ? token : INVALID_TOKEN, 'invalid');
      return;
    }
    // A trace continued by a publisher that sets only the W3C header (a third party's tracing), not
    // the envelope's field: the next hop continues it, as Chorus's own headers say it would.
    const envelope = withHeaderTrace(parsed.value, m.headers?.get(ChorusHeaders.Traceparent));
    const log = createEnvelopeLogger(this.log, {
      correlation_id: envelope.correlation_id,
      causation_id: envelope.causation_id,
      message_id: envelope.message_id,
      message_type: envelope.message_type,
      subject: m.subject,
      ...this.agentBinding,
    });
    const finished = this.options.skipFinished ? await this.finishedStatus(m, envelope) : undefined;
    if (finished) {
      log.info({ workflow_status: finished }, `workflow already ${finished}; not starting work`);
      m.ack();
      this.count(envelope.message_type, 'skipped');
      return;
    }
    const deadline = new Date(envelope.deadline);
    if (this.options.skipExpired && deadline.getTime() <= Date.now()) {
      log.info({ deadline: envelope.deadline }, 'workflow deadline has passed; not starting work');
      m.ack();
      this.count(envelope.message_type, 'skipped');
      return;
    }

    const ctx = this.createContext(m, envelope, log, deadline, delivery);
    const timer = this.bus.metrics.stepDuration.startTimer({ agent: this.options.agent, message_type: envelope.message_type });
    try {
      const outbound = toOutbound(await this.handler(envelope, ctx.context));
      for (const { envelope: out } of outbound) checkOutbound(out, this.options.agent);
      await Promise.all(
        outbound.map(({ envelope: out, part }) => {
          out.attempt = delivery;
          return this.bus.publish(out, { part });
        }),
      );
      m.ack();
      this.count(envelope.message_type, 'ok');
      log.debug({ outputs: outbound.map((o) => o.envelope.message_type) }, 'handled');
    } catch (error) {
      this.count(envelope.message_type, await this.onHandlerError(m, envelope, error, log, delivery));
    } finally {
      timer();
      ctx.dispose();
    }
  }

  /**
   * How the workflow ended, if this process knows it did. An envelope stored before this process
   * began to listen for ends (a backlog after a restart) may belong to a workflow that ended while
   * it was down (cancelled, say): that is read from the stream, once per such envelope.
   */
  private async finishedStatus(m: JsMsg, envelope: Envelope): Promise<WorkflowStatus | undefined> {
    const finished = this.bus.finished;
    if (!finished) return undefined;
    const known = finished.statusOf(envelope.tenant_id, envelope.correlation_id);
    // A margin for the server's clock and the subscription's set-up.
    if (known || m.info.timestampNanos / 1e6 >= finished.listeningSince + LISTENING_MARGIN_MS) return known;
    try {
      return await finished.lookup(envelope.tenant_id, envelope.correlation_id);
    } catch (e) {
      // The work goes ahead; the hub still ignores what a finished workflow is sent.
      this.log.warn({ err: e, correlation_id: envelope.correlation_id }, 'could not read how the workflow ended; handling the envelope');
      return undefined;
    }
  }

  private createContext(m: JsMsg, envelope: Envelope, log: Logger, deadline: Date, delivery: number) {
    const controller = new AbortController();
    // A long handler keeps its message: without this, the server would hand it to another replica.
    const keepAlive = setInterval(() => m.working(), Math.max(500, Math.floor(this.options.ackWaitMs / 2)));
    // A deadline may be months away, past what one setTimeout can wait for.
    const cancelTimer = setTimerAt(deadline.getTime(), () => controller.abort(new Error('workflow deadline passed')));
    // One listener on the shared shutdown signal fans out to every handler (no listener per message).
    const unlink = this.loop.linkShutdown(controller);
    const context: HandlerContext = {
      log,
      deadline,
      // Made on first use: an AbortSignal is an EventTarget, about 5 µs to create (several times a
      // JSON.parse of a 1 KB envelope), and most handlers never look at it. An abort before that
      // use is kept: the controller makes its signal, aborted, when it aborts.
      get signal() {
        return controller.signal;
      },
      subject: m.subject,
      delivery,
      idempotencyKey: boundedKey(m.headers?.get('Nats-Msg-Id')) || idempotencyKey(envelope.correlation_id, envelope.message_type, envelope.agent),
      streamSeq: m.seq,
      // Made on first use too (parsed from the message's reply subject); the hub reads it for some envelopes.
      get storedAt() {
        return m.time.getTime();
      },
      working: () => m.working(),
    };
    return {
      context,
      dispose: () => {
        clearInterval(keepAlive);
        cancelTimer();
        unlink();
      },
    };
  }

  private count(messageType: string, outcome: 'ok' | 'retry' | 'failed' | 'invalid' | 'skipped'): void {
    this.bus.metrics.envelopes.inc({ agent: this.options.agent, message_type: messageType, outcome });
  }

  private async onHandlerError(m: JsMsg, envelope: Envelope, error: unknown, log: Logger, firstDelivery: number): Promise<'retry' | 'failed'> {
    const details = toErrorDetails(error);
    // Redeliveries that arrived while this handler ran count towards max_deliver too.
    const delivery = Math.max(firstDelivery, this.loop.deliveriesOf(m.seq) ?? 0);
    // A NATS outage or a leader election is worth waiting out, whatever the handler was doing.
    details.retry_possible ||= isTransient(error);
    if (details.retry_possible && delivery < this.options.maxDeliver) {
      const delay = this.backoff(delivery);
      // Reported where it arose (a hub handing its envelopes over): one line there, not one per envelope here.
      if (error instanceof ChorusError && error.reported) log.debug({ err: error, delivery, retry_in_ms: delay }, 'step failed; will retry');
      else log.warn({ err: error, delivery, retry_in_ms: delay }, 'step failed; will retry');
      m.nak(delay);
      return 'retry';
    }
    // A request this deployment cannot serve fails its workflow, but is the caller's to fix, not the operator's.
    if (error instanceof StepFailedError && error.requestError) log.warn({ err: error, delivery }, 'step refused the request; giving up');
    else log.error({ err: error, delivery }, 'step failed; giving up');
    await this.giveUp(m, async () => {
      if (this.options.reportFailures === false) {
        // The hub keeps the ledger: its own failures are dead-lettered, never announced as a workflow's.
        await this.deadLetter({ reason: 'step_failed', subject: m.subject, streamSeq: m.seq, consumer: this.durable, data: m.data, deliveries: delivery, error: details });
        return;
      }
      const report = deriveEnvelope(envelope, {
        messageType: 'status_update',
        agent: this.options.agent,
        status: 'error',
        errorDetails: details,
        attempt: delivery,
        payload: {
          workflow_status: 'failed',
          step: envelope.message_type,
          reason: `${this.options.agent} failed handling ${envelope.message_type}: ${details.error_message}`,
          error: details,
        },
      });
      await this.bus.publish(report, { part: `failed-${envelope.message_type}` });
      await this.deadLetter({ reason: 'step_failed', subject: m.subject, streamSeq: m.seq, consumer: this.durable, data: m.data, deliveries: delivery, error: details });
    });
    return 'failed';
  }

  /** Stores a dead letter cut to fit in a message of the connected server. */
  private deadLetter(input: DeadLetterInput): Promise<void> {
    return publishDeadLetter(this.bus, createDeadLetter(input, new Date(), deadLetterLimit(this.bus)));
  }

  /** Runs the reporting, then terminates the message; if reporting fails, retries it later. */
  private async giveUp(m: JsMsg, report: () => Promise<void>): Promise<void> {
    try {
      await report();
      m.term();
    } catch (e) {
      this.log.error({ err: e, subject: m.subject }, 'could not report a failed message; it will be redelivered');
      m.nak(this.options.retryMaxMs);
    }
  }

  private backoff(delivery: number): number {
    const base = Math.min(this.options.retryMaxMs, this.options.retryBaseMs * 2 ** (delivery - 1));
    return Math.round(base * (0.8 + Math.random() * 0.4));
  }
}

/**
 * What a handler returns must pass the same check its readers will make: an invalid envelope would
 * be dead-lettered by the next agent and the hub, and the workflow would wait out its deadline.
 * Refused here, it fails the step at once, with the fields that are wrong.
 */
function checkOutbound(out: Envelope, agent: string): void {
  const checked = parseEnvelope(out);
  if (checked.ok) return;
  const fields = checked.error.errors.map((e) => `${e.field}: ${e.messages.join('; ')}`).join(', ');
  throw new StepFailedError('INVALID_OUTPUT', `${agent} produced an invalid ${String(out.message_type)} envelope (${fields})`, { retryable: false });
}

/** The envelope, with the `traceparent` header as its trace context when its body carries none. */
export function withHeaderTrace(envelope: Envelope, header: string | undefined): Envelope {
  // parseTraceparent refuses what is no W3C traceparent, and all-zero ids.
  if (envelope.traceparent || parseTraceparent(header) === null) return envelope;
  return { ...envelope, traceparent: header as string };
}

/** Keys the ledger keeps as they are; a longer `Nats-Msg-Id` (anyone's header) is kept as its hash. */
const MAX_KEY_CHARS = 300;

/** The `Nats-Msg-Id` as the ledger keys it: a header of kilobytes would grow a workflow's record by as much per envelope. */
export function boundedKey(header: string | undefined): string | undefined {
  if (!header || header.length <= MAX_KEY_CHARS) return header;
  return `sha256:${createHash('sha256').update(header).digest('hex')}`;
}
