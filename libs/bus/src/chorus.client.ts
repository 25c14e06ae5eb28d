import {
  HubSubjects,
  createCorrelationId,
  createEnvelope,
  isTerminalStatus,
  parseEnvelope,
  workflowSubject,
  type CorrelationIdOptions,
  type Envelope,
  type HistoryReply,
  type ListReply,
  type ListRequest,
  type QueryPayload,
  type StatusUpdatePayload,
  type WorkflowView,
} from '@chorus/envelope';
import type { Bus } from './nats.bus';
import { RemoteError } from './bus.errors';
import { requestReply } from './request-reply';

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
  /** True when the stream already had this workflow's query (same idempotency key). */
  duplicate: boolean;
}

export interface SubmitOptions {
  /** A W3C traceparent to continue (from an HTTP request). */
  traceparent?: string | null;
  /** Called once the query is stored in the stream. */
  onSubmitted?: (submitted: Submitted) => void;
}

/** Submits queries and reads workflows over the bus; the ingress and the CLI are built on it. */
export class ChorusClient {
  constructor(
    private readonly bus: Bus,
    private readonly options: ChorusClientOptions,
  ) {}

  /** Builds the query envelope, checks it, and publishes it; resolves once the stream stored it. */
  async submit(request: SubmitQuery, options: SubmitOptions = {}): Promise<Submitted> {
    const envelope = this.createQueryEnvelope(request, options.traceparent);
    const ack = await this.bus.publish(envelope);
    const submitted = {
      correlation_id: envelope.correlation_id,
      tenant_id: envelope.tenant_id,
      deadline: envelope.deadline,
      duplicate: ack.duplicate,
    };
    options.onSubmitted?.(submitted);
    return submitted;
  }

  /**
   * Submits and waits for the workflow's terminal status, then returns the hub's view of it. Resolves
   * with the current (non-terminal) view if the hub reports nothing by the deadline plus grace.
   */
  async submitAndWait(request: SubmitQuery, options: SubmitOptions = {}): Promise<{ submitted: Submitted; workflow: WorkflowView | null }> {
    const envelope = this.createQueryEnvelope(request, options.traceparent);
    const terminal = this.waitForTerminal(envelope.tenant_id, envelope.correlation_id, new Date(envelope.deadline));
    try {
      const ack = await this.bus.publish(envelope);
      const submitted = {
        correlation_id: envelope.correlation_id,
        tenant_id: envelope.tenant_id,
        deadline: envelope.deadline,
        duplicate: ack.duplicate,
      };
      options.onSubmitted?.(submitted);
      if (ack.duplicate) {
        // The same workflow was submitted before; it may have finished already.
        const existing = await this.workflow(envelope.correlation_id, envelope.tenant_id);
        if (existing && isTerminalStatus(existing.status)) return { submitted, workflow: existing };
      }
      await terminal.done;
      return { submitted, workflow: await this.workflow(envelope.correlation_id, envelope.tenant_id) };
    } finally {
      terminal.cancel();
    }
  }

  /**
   * Resolves when the hub publishes a terminal status for the workflow, or when the deadline plus
   * grace passes. Subscribe before the workflow can finish (before submitting it).
   */
  waitForTerminal(tenantId: string, correlationId: string, deadline: Date): { done: Promise<void>; cancel: () => void } {
    const sub = this.bus.nc.subscribe(workflowSubject(tenantId, 'status_update', correlationId));
    let timer: NodeJS.Timeout | undefined;
    const done = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, Math.max(0, deadline.getTime() - Date.now()) + this.options.terminalGraceMs);
      void (async () => {
        for await (const m of sub) {
          const parsed = parseEnvelope(m.data);
          if (!parsed.ok || parsed.value.agent !== 'hub') continue;
          const payload = parsed.value.payload as StatusUpdatePayload;
          if (isTerminalStatus(payload.workflow_status)) break;
        }
        resolve();
      })();
    });
    return {
      done: done.finally(() => clearTimeout(timer)),
      cancel: () => {
        clearTimeout(timer);
        sub.unsubscribe();
      },
    };
  }

  /** The hub's view of a workflow, or null when it does not know it. */
  async workflow(correlationId: string, tenantId?: string): Promise<WorkflowView | null> {
    try {
      return await requestReply<WorkflowView>(this.bus, HubSubjects.Workflow, { correlation_id: correlationId, tenant_id: tenantId }, this.options.requestTimeoutMs);
    } catch (e) {
      if (e instanceof RemoteError && e.code === 'WORKFLOW_NOT_FOUND') return null;
      throw e;
    }
  }

  /** The workflow's envelopes in stream order, or null when the hub does not know it. */
  async history(correlationId: string, tenantId?: string): Promise<HistoryReply | null> {
    try {
      return await requestReply<HistoryReply>(this.bus, HubSubjects.History, { correlation_id: correlationId, tenant_id: tenantId }, this.options.requestTimeoutMs);
    } catch (e) {
      if (e instanceof RemoteError && e.code === 'WORKFLOW_NOT_FOUND') return null;
      throw e;
    }
  }

  list(request: ListRequest): Promise<ListReply> {
    return requestReply<ListReply>(this.bus, HubSubjects.List, request, this.options.requestTimeoutMs);
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

  private createQueryEnvelope(request: SubmitQuery, traceparent?: string | null): Envelope<'query'> {
    const payload: QueryPayload = {
      query: request.query,
      session_id: request.session_id ?? null,
      profiles: request.profiles ?? null,
      top_k: request.top_k ?? this.options.defaultTopK,
      require_all: request.require_all ?? false,
    };
    const envelope = createEnvelope({
      messageType: 'query',
      correlationId: createCorrelationId(payload, this.options.correlation),
      tenantId: request.tenant_id,
      agent: this.options.agent,
      status: 'pending',
      deadline: new Date(Date.now() + (request.deadline_ms ?? this.options.defaultDeadlineMs)),
      nextSteps: ['intent', 'planner', 'search', 'responder'],
      traceparent,
      payload,
    });
    const checked = parseEnvelope(JSON.parse(JSON.stringify(envelope)));
    if (!checked.ok) throw checked.error;
    return envelope;
  }
}

