import {
  HubSubjects,
  QUERY_NEXT_STEPS,
  correlationIdForIdempotencyKey,
  correlationIdForRetry,
  createCorrelationId,
  createEnvelope,
  isTerminalStatus,
  parseEnvelope,
  parseWorkflowSubject,
  retryBudgetMs,
  workflowFilter,
  workflowSubject,
  type CorrelationIdOptions,
  type Envelope,
  type HistoryReply,
  type ListReply,
  type ListRequest,
  type QueryPayload,
  type WorkflowView,
} from '@chorus/envelope';
import type { Bus } from './nats.bus';
import { BusErrorCodes, NotRecordedYetError, RemoteError } from './bus.errors';
import { checkSameQuery, recordOfEnded } from './idempotency-checks';
import { askUntil } from './ask-until';
import { RETRY_DECISION_WAIT_MS, requestRetry, type RetryStarted, type RetryTarget } from './workflow.retry';
import { isTransient } from './transient-error';
import { setTimerAt } from './long-timer';
import { readWorkflowHistory } from './workflow.history';
import { confirmEnded, readAnnouncedEnd, terminalStatusOf } from './workflow.watch';
import { HUB_READ, requestReply } from './request-reply';

/** How long the last read of a workflow whose end was not confirmed waits for the hub. */
const UNCONFIRMED_READ_MS = 1000;

/** What a caller submits: the body of `POST /v1/queries`. */
export interface SubmitQuery {
  query: string;
  tenant_id: string;
  session_id?: string | null;
  profiles?: string[] | null;
  top_k?: number;
  deadline_ms?: number;
  require_all?: boolean;
}

/** How long `find` asks the hub again about a workflow the stream holds but the hub has not recorded. */
const RECORD_WAIT_MS = 2000;
/** The same, for a workflow whose end the hub has already announced. */
const ANNOUNCED_END_WAIT_MS = 300;

export interface ChorusClientOptions {
  /** The agent name the client publishes as (`ingress`, `cli`). */
  agent: string;
  correlation: CorrelationIdOptions;
  defaultDeadlineMs: number;
  defaultTopK: number;
  /** Milliseconds to wait for the hub's answer to a query. */
  requestTimeoutMs: number;
  /** Extra time past the deadline to wait for the hub's terminal update. */
  terminalGraceMs: number;
}

export interface Submitted {
  correlation_id: string;
  tenant_id: string;
  deadline: string;
  /** True when this workflow already existed (same idempotency key or session id); nothing new started. */
  duplicate: boolean;
}

export interface SubmitOptions {
  /**
   * The same key (per tenant) returns the same workflow instead of starting another: 1 to 256
   * printable ASCII characters, no spaces (`IDEMPOTENCY_KEY_PATTERN`); any other key, the empty one
   * included, throws a RangeError.
   */
  idempotencyKey?: string;
  /** Use this correlation id (an A2A task id, say) instead of minting one. */
  correlationId?: string;
  /** A W3C traceparent to continue (from an HTTP request). */
  traceparent?: string | null;
  /** Called once the query is stored in the stream. */
  onSubmitted?: (submitted: Submitted) => void;
  /**
   * `submitAndWait` only: stops the wait (the process shuts down, say), which then resolves at
   * once with the workflow's current view, as when the hub reports no end by the deadline plus grace.
   */
  signal?: AbortSignal;
}

/** Submits queries and reads workflows over the bus; the ingress and the CLI are built on it. */
export class ChorusClient {
  constructor(
    private readonly bus: Bus,
    private readonly options: ChorusClientOptions,
  ) {}

  /** Builds the query envelope, checks it, and publishes it; resolves once the stream stored it. */
  async submit(request: SubmitQuery, options: SubmitOptions = {}): Promise<Submitted> {
    return (await this.publishQuery(request, options)).submitted;
  }

  /**
   * Submits and waits for the workflow's terminal status, then returns the hub's view of it. Resolves
   * with the current (non-terminal) view if the hub reports nothing by the deadline plus grace (or
   * when `signal` aborts), or with no view (null) if the hub does not answer then either.
   */
  async submitAndWait(request: SubmitQuery, options: SubmitOptions = {}): Promise<{ submitted: Submitted; workflow: WorkflowView | null }> {
    const { submitted, terminal } = await this.publishQuery(request, options, true);
    try {
      if (submitted.duplicate) {
        const existing = await this.workflow(submitted.correlation_id, submitted.tenant_id);
        if (existing && isTerminalStatus(existing.status)) return { submitted, workflow: existing };
      }
      const ended = await terminal?.done;
      if (ended) return { submitted, workflow: ended };
      return { submitted, workflow: await this.unconfirmed(submitted.correlation_id, submitted.tenant_id) };
    } finally {
      terminal?.cancel();
    }
  }

  /**
   * With an idempotency key, a workflow the hub already knows is returned as it is (even after the
   * stream's duplicate window); one that ended and has left the ledger is refused
   * ({@link IdempotencyKeyExpiredError}); otherwise the query is published, and a re-publish inside
   * the window is dropped by the stream. Either way, a key whose workflow was started with another
   * request is refused ({@link IdempotencyKeyReusedError}).
   */
  private async publishQuery(request: SubmitQuery, options: SubmitOptions, watch = false) {
    const envelope = this.createQueryEnvelope(request, options);
    const submittedAs = (duplicate: boolean): Submitted => ({
      correlation_id: envelope.correlation_id,
      tenant_id: envelope.tenant_id,
      deadline: envelope.deadline,
      duplicate,
    });
    const keyed = options.idempotencyKey !== undefined;
    if (keyed) {
      let existing = await this.workflow(envelope.correlation_id, envelope.tenant_id);
      // Checked whether or not the hub still knows the workflow: it forgets workflows long before
      // the stream drops their envelopes.
      await checkSameQuery(this.bus, envelope, request);
      existing ??= await recordOfEnded(this.bus, envelope, ANNOUNCED_END_WAIT_MS, () => this.workflow(envelope.correlation_id, envelope.tenant_id));
      if (existing) {
        const submitted = { ...submittedAs(true), deadline: existing.deadline };
        options.onSubmitted?.(submitted);
        // A caller who waits for it waits for its end, as the first submission's caller does; the
        // subscription is made before submitAndWait reads the workflow again, so no end is missed.
        const running = watch && !isTerminalStatus(existing.status);
        const terminal = running ? this.waitForTerminal(envelope.tenant_id, envelope.correlation_id, new Date(existing.deadline), options.signal) : undefined;
        return { submitted, terminal };
      }
    }
    const terminal = watch ? this.waitForTerminal(envelope.tenant_id, envelope.correlation_id, new Date(envelope.deadline), options.signal) : undefined;
    try {
      // A keyed query the stream drops is checked (another submission with the key may have been
      // stored since the check above) before the hub is told of a duplicate: a refused one is none.
      const ack = await this.bus.publish(envelope, { reportDuplicate: !keyed, failWhenFull: true });
      if (ack.duplicate && keyed) {
        await checkSameQuery(this.bus, envelope, request);
        await this.bus.reportDuplicate(envelope, ack);
      }
      const submitted = submittedAs(ack.duplicate);
      options.onSubmitted?.(submitted);
      return { submitted, terminal };
    } catch (e) {
      terminal?.cancel();
      throw e;
    }
  }

  /**
   * Resolves with the hub's view of the finished workflow when the hub announces a terminal status
   * for it and its ledger confirms it (anyone may publish a status update as `hub`), or with null
   * when the deadline plus grace passes or `signal` aborts. Subscribe before the workflow can finish
   * (before submitting it).
   */
  waitForTerminal(tenantId: string, correlationId: string, deadline: Date, signal?: AbortSignal): { done: Promise<WorkflowView | null>; cancel: () => void } {
    const sub = this.bus.nc.subscribe(workflowSubject(tenantId, 'status_update', correlationId));
    let stopWaiting: () => void = () => undefined;
    const done = new Promise<WorkflowView | null>((resolve) => {
      const giveUp = () => resolve(null);
      const cancelDeadline = setTimerAt(deadline.getTime() + this.options.terminalGraceMs, giveUp);
      signal?.addEventListener('abort', giveUp, { once: true });
      if (signal?.aborted) giveUp();
      stopWaiting = () => {
        cancelDeadline();
        signal?.removeEventListener('abort', giveUp);
      };
      void (async () => {
        for await (const m of sub) {
          const parsed = parseEnvelope(m.data);
          if (!parsed.ok || !terminalStatusOf(parsed.value)) continue;
          const view = await confirmEnded(this.bus, tenantId, correlationId);
          if (view) return resolve(view);
        }
        resolve(null);
      })().catch(() => resolve(null));
    });
    return {
      done: done.finally(() => stopWaiting()),
      cancel: () => {
        stopWaiting();
        sub.unsubscribe();
      },
    };
  }

  /**
   * The current view of a workflow whose end was not confirmed in time. Its id is in the stream and is
   * the caller's only handle on it: a hub that does not answer now is "not confirmed" (null), not an
   * error that would lose the id.
   */
  private unconfirmed(correlationId: string, tenantId: string): Promise<WorkflowView | null> {
    // Past the deadline and its grace, a hub that has not said how it ended gets a moment more,
    // not a whole request timeout: the caller was told it waits the deadline and the grace.
    return this.workflow(correlationId, tenantId, Math.min(UNCONFIRMED_READ_MS, this.options.requestTimeoutMs)).catch((e: unknown) => {
      if (isTransient(e)) return null;
      throw e;
    });
  }

  /** The view of a workflow whose terminal status was announced (asked again until the hub shows it). */
  async settled(correlationId: string, tenantId: string): Promise<WorkflowView | null> {
    let view = await this.workflow(correlationId, tenantId);
    for (let i = 0; i < 20 && (!view || !isTerminalStatus(view.status)); i++) {
      await new Promise((r) => setTimeout(r, 50));
      view = await this.workflow(correlationId, tenantId);
    }
    return view;
  }

  /**
   * The hub's view of a workflow, like `workflow`, for a caller that may ask right after submitting
   * it: the hub records a workflow a moment after its query is stored. If the hub does not know the
   * id but the stream holds its query from within `acceptedWithinMs`, the hub is asked again for up
   * to `waitMs`, then NotRecordedYetError (retry), not null (unless that query is no valid envelope,
   * which the hub never records). If the stream also holds an end the hub
   * announced, it is asked for a moment only (it saves an end right after announcing it): a finished
   * workflow that left the ledger keeps its trail in the stream, and that one is gone (null). The
   * stream is looked at with two reads of the last message on a subject (the stream's message-get
   * API, `$JS.API.STREAM.MSG.GET`, which a client's NATS user must be allowed), no consumer.
   */
  async find(correlationId: string, tenantId: string | undefined, options: { acceptedWithinMs: number; waitMs?: number }): Promise<WorkflowView | null> {
    const view = await this.workflow(correlationId, tenantId);
    if (view) return view;
    const stream = this.bus.options.workflowStream;
    const query = await this.bus.jsm.streams.getMessage(stream, { last_by_subj: workflowFilter({ tenantId, messageType: 'query', correlationId }) });
    if (!query || query.time.getTime() < Date.now() - options.acceptedWithinMs) return null;
    // A query the hub refuses (not a valid envelope: it is dead-lettered) is never recorded; a read
    // of its id waited for it, and answered "not recorded yet" for as long as it stayed in the stream.
    if (!parseEnvelope(query.data, { subject: query.subject }).ok) return null;
    const tenant = parseWorkflowSubject(query.subject)?.tenantId;
    const ended = tenant ? (await readAnnouncedEnd(this.bus, tenant, correlationId)) !== null : false;
    const recorded = await askUntil(Date.now() + (ended ? ANNOUNCED_END_WAIT_MS : (options.waitMs ?? RECORD_WAIT_MS)), () => this.workflow(correlationId, tenantId));
    if (recorded || ended) return recorded;
    throw new NotRecordedYetError(correlationId);
  }

  /** The hub's view of a workflow, or null when it does not know it. */
  async workflow(correlationId: string, tenantId?: string, timeoutMs = this.options.requestTimeoutMs): Promise<WorkflowView | null> {
    try {
      return await requestReply<WorkflowView>(this.bus, HubSubjects.Workflow, { correlation_id: correlationId, tenant_id: tenantId }, timeoutMs, HUB_READ);
    } catch (e) {
      if (e instanceof RemoteError && e.code === 'WORKFLOW_NOT_FOUND') return null;
      throw e;
    }
  }

  /**
   * The workflow's envelopes in stream order, or null when the hub does not know it. A history too
   * large for one reply (its envelopes add up to more than max_payload) is read from the stream
   * here, as the hub would have read it.
   */
  async history(correlationId: string, tenantId?: string): Promise<HistoryReply | null> {
    try {
      return await requestReply<HistoryReply>(this.bus, HubSubjects.History, { correlation_id: correlationId, tenant_id: tenantId }, this.options.requestTimeoutMs, HUB_READ);
    } catch (e) {
      if (e instanceof RemoteError && e.code === 'WORKFLOW_NOT_FOUND') return null;
      if (e instanceof RemoteError && e.code === BusErrorCodes.ReplyTooLarge) return this.readHistory(correlationId, tenantId);
      throw e;
    }
  }

  private async readHistory(correlationId: string, tenantId?: string): Promise<HistoryReply | null> {
    const view = await this.workflow(correlationId, tenantId);
    if (!view) return null;
    // As the hub does: from a minute before the workflow began, so clock skew loses nothing.
    const since = new Date(Date.parse(view.started_at) - 60_000);
    const entries = await readWorkflowHistory(this.bus, correlationId, { tenantId: view.tenant_id, since: Number.isNaN(since.getTime()) ? undefined : since });
    return { correlation_id: correlationId, envelopes: entries.map((e) => e.envelope) };
  }

  list(request: ListRequest): Promise<ListReply> {
    return requestReply<ListReply>(this.bus, HubSubjects.List, request, this.options.requestTimeoutMs, HUB_READ);
  }

  /** Totals and per-agent statistics from the active hub. */
  stats<T = unknown>(tenantId?: string): Promise<T> {
    return requestReply<T>(this.bus, HubSubjects.Stats, tenantId ? { tenant_id: tenantId } : {}, this.options.requestTimeoutMs, HUB_READ);
  }

  /** Publishes a cancel command for the workflow (the hub records it; agents stop starting work). */
  async cancel(workflow: Pick<WorkflowView, 'correlation_id' | 'tenant_id' | 'deadline'>, reason: string): Promise<void> {
    const command = createEnvelope({
      messageType: 'orchestration_command',
      correlationId: workflow.correlation_id,
      tenantId: workflow.tenant_id,
      agent: this.options.agent,
      deadline: workflow.deadline,
      targetAgent: 'hub',
      payload: { command: 'cancel', reason },
    });
    await this.bus.publish(command, { part: 'cancel' });
  }

  /**
   * Asks the hub to retry a workflow that ended without a complete answer, and resolves once the hub
   * has recorded the retry ({@link requestRetry}).
   */
  retry(workflow: RetryTarget, reason: string): Promise<RetryStarted> {
    return requestRetry(this, this.bus, this.options.agent, workflow, reason);
  }

  /**
   * Retries and waits for the retry's terminal status, as {@link submitAndWait} does for a query: the
   * retry's view once it ended, its current view if the hub reports no end by its deadline plus grace,
   * or null if the hub does not answer then either.
   */
  async retryAndWait(workflow: RetryTarget, reason: string): Promise<{ started: RetryStarted; workflow: WorkflowView | null }> {
    const id = correlationIdForRetry(workflow.tenant_id, workflow.correlation_id);
    // Subscribed before the retry can start, so its end cannot pass unseen.
    // The hub gives the retry its budget from when it applies the command: up to the wait for that later.
    const terminal = this.waitForTerminal(workflow.tenant_id, id, new Date(Date.now() + retryBudgetMs(workflow) + RETRY_DECISION_WAIT_MS));
    try {
      const started = await this.retry(workflow, reason);
      const now = await this.workflow(id, workflow.tenant_id);
      if (now && isTerminalStatus(now.status)) return { started, workflow: now };
      const ended = await terminal.done;
      return { started, workflow: ended ?? (await this.unconfirmed(id, workflow.tenant_id)) };
    } finally {
      terminal.cancel();
    }
  }

  /** Throws the InvalidEnvelopeError `submit` would, naming every invalid field; publishes nothing. */
  checkQuery(request: SubmitQuery, options: SubmitOptions = {}): void {
    this.createQueryEnvelope(request, options);
  }

  private createQueryEnvelope(request: SubmitQuery, options: SubmitOptions): Envelope<'query'> {
    const payload: QueryPayload = {
      query: request.query,
      session_id: request.session_id ?? null,
      profiles: request.profiles ?? null,
      top_k: request.top_k ?? this.options.defaultTopK,
      require_all: request.require_all ?? false,
    };
    const envelope = createEnvelope({
      messageType: 'query',
      correlationId:
        options.correlationId ??
        (options.idempotencyKey !== undefined
          ? correlationIdForIdempotencyKey(request.tenant_id, options.idempotencyKey)
          : createCorrelationId({ ...payload, tenant_id: request.tenant_id }, this.options.correlation)),
      tenantId: request.tenant_id,
      agent: this.options.agent,
      status: 'pending',
      deadline: new Date(Date.now() + (request.deadline_ms ?? this.options.defaultDeadlineMs)),
      nextSteps: [...QUERY_NEXT_STEPS],
      traceparent: options.traceparent,
      payload,
    });
    const checked = parseEnvelope(JSON.parse(JSON.stringify(envelope)));
    if (!checked.ok) throw checked.error;
    return envelope;
  }
}

