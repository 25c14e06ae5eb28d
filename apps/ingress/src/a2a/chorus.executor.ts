import { TaskState } from '@a2a-js/sdk';
import { AgentEvent, type AgentExecutionEvent, type AgentExecutor, type ExecutionEventBus, type RequestContext } from '@a2a-js/sdk/server';
import { ChorusClient, watchWorkflow, type Bus, type SubmitQuery } from '@chorus/bus';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { flattenValidationErrors, InvalidEnvelopeError, SESSION_ID_PATTERN, type WorkflowView } from '@chorus/envelope';
import type { Logger } from '@chorus/observability';
import { agentMessage, artifactsOf, endingOf, TASK_STATE_OF, textOf } from './a2a.mapping';
import type { A2AUser } from './a2a.user';
import type { ChorusTaskStore } from './chorus.task-store';
import { SubmitQueryDto } from '../submit-query.dto';

/**
 * Runs each A2A task as one Chorus workflow (the task id is the correlation id): a Task, a
 * `working` status update for every step as the agents publish it, the answer and the ranked
 * results as artifacts, then exactly one terminal status — completed, failed (a failure or a
 * timeout, with the reason) or canceled. A message Chorus cannot run (no text, a query the envelope
 * refuses) is a rejected task that names why and starts no workflow. If the hub (down or cut off)
 * has not confirmed an end CHORUS_WATCH_GRACE_MS after the workflow's deadline (a minute by
 * default), the task is left `working` with that reason as its last message, rather than waited
 * on for ever or given an outcome nobody knows; `tasks/get` reads the ledger again later.
 */
export class ChorusExecutor implements AgentExecutor {
  /** Tenants of the tasks running in this process: `cancelTask` is not told whose task it is. */
  private readonly running = new Map<string, string>();

  constructor(
    private readonly bus: Bus,
    private readonly client: ChorusClient,
    private readonly log: Logger,
    /** How long after a workflow's deadline to wait for the hub to confirm its end (CHORUS_WATCH_GRACE_MS). */
    private readonly watchGraceMs: number,
    /** The longest deadline a message may ask for (CHORUS_MAX_DEADLINE_MS). */
    private readonly maxDeadlineMs: number,
    /** Aborted when the ingress shuts down: the tasks followed here are no longer followed (their workflows go on). */
    private readonly closing: AbortSignal,
    /** Told about a task left unconfirmed, so that `tasks/get` asks the ledger again. */
    private readonly store?: ChorusTaskStore,
  ) {}

  async execute(ctx: RequestContext, events: ExecutionEventBus): Promise<void> {
    const { taskId } = ctx;
    // The SDK's 0.3 layer passes a message's contextId on unchecked, so it can be any JSON value.
    // One that is not a string is no context to answer with: the task's is its own id, as it is for
    // a task rebuilt from the ledger whose context was no valid session id (below).
    const contextId = typeof ctx.contextId === 'string' ? ctx.contextId : taskId;
    const tenant = (ctx.context?.user as A2AUser | undefined)?.tenant;
    const query = textOf(ctx.userMessage);
    // The workflow keeps the task's context as its session, so a task rebuilt from the ledger (by
    // another replica, or after a restart) has the same contextId. One that is not a valid session
    // id is not kept; such a task is rebuilt with its own id as its context.
    const session_id = typeof ctx.contextId === 'string' && SESSION_ID_PATTERN.test(ctx.contextId) ? ctx.contextId : undefined;
    const asked = queryOptionsOf(ctx.userMessage?.metadata, this.maxDeadlineMs);
    // Refused before any workflow starts: the task is rejected (not failed), and names no workflow.
    let refusal = !tenant ? 'no tenant for this request' : !query ? 'the message has no text part to search for' : asked.refusal;
    if (!refusal && tenant) {
      try {
        this.client.checkQuery({ query, tenant_id: tenant, session_id, ...asked.options }, { correlationId: taskId });
      } catch (e) {
        if (!(e instanceof InvalidEnvelopeError)) throw e;
        refusal = invalidQuery(e);
      }
    }
    if (tenant) this.store?.markStarting(taskId, tenant);
    events.publish(
      AgentEvent.task({
        id: taskId,
        contextId,
        status: {
          state: refusal ? TaskState.TASK_STATE_REJECTED : TaskState.TASK_STATE_SUBMITTED,
          timestamp: new Date().toISOString(),
          message: refusal ? agentMessage(taskId, contextId, refusal) : undefined,
        },
        artifacts: [],
        // The user's message, as a task's history starts (a non-blocking send answered with this Task had none).
        history: ctx.userMessage ? [ctx.userMessage] : [],
        metadata: refusal ? undefined : { correlation_id: taskId, status_url: `/v1/workflows/${taskId}` },
      }),
    );
    if (refusal || !tenant) return;

    this.running.set(taskId, tenant);
    try {
      let deadline: string;
      try {
        ({ deadline } = await this.client.submit({ query, tenant_id: tenant, session_id, ...asked.options }, { correlationId: taskId }));
      } catch (e) {
        if (e instanceof InvalidEnvelopeError) {
          return events.publish(statusUpdate(taskId, contextId, TaskState.TASK_STATE_REJECTED, invalidQuery(e)));
        }
        throw e;
      }
      // Until the ingress shuts down: the SDK then ends the task's streams, as it ends them for a
      // task its executor leaves unfinished, and their clients resubscribe elsewhere.
      for await (const event of this.follow(taskId, contextId, tenant, deadline, this.closing)) events.publish(event);
    } finally {
      this.running.delete(taskId);
    }
  }

  /**
   * The A2A events of a workflow from its last minute on until it ends: a `working` status update
   * for every step, then its artifacts and exactly one terminal status, as the hub's ledger has it;
   * or, if the hub has not confirmed an end `watchGraceMs` after the deadline, one `working` update
   * saying so. `execute` publishes them for the task it starts; ChorusRequestHandler streams them to
   * a resubscriber of a task started elsewhere (over REST, by another replica), until `signal`
   * aborts (its client left, or the ingress shuts down: then one last `working` update says so).
   */
  async *follow(taskId: string, contextId: string, tenant: string, deadline?: string, signal?: AbortSignal): AsyncGenerator<AgentExecutionEvent> {
    const watching = watchWorkflow(this.bus, tenant, taskId, { since: new Date(Date.now() - 60_000), giveUpAfterDeadlineMs: this.watchGraceMs, deadline, signal });
    for await (const event of watching) {
      if (signal?.aborted) break;
      if (event.kind === 'terminal') {
        // The watch ends on the hub ledger's view of the finished workflow (never on an announcement alone).
        yield* this.finish(event.view, taskId, contextId);
        return;
      }
      if (event.kind === 'unconfirmed') {
        this.log.warn({ correlation_id: taskId, deadline: event.deadline }, 'A2A task left working: the hub did not confirm its end');
        // Only a task running here has a snapshot in the store that would otherwise pass for its last word.
        if (this.running.has(taskId)) this.store?.markUnconfirmed(taskId, tenant);
        yield statusUpdate(taskId, contextId, TaskState.TASK_STATE_WORKING, event.reason);
        return;
      }
      const e = event.envelope;
      if (e.message_type === 'query' || e.message_type === 'status_update') continue;
      yield statusUpdate(taskId, contextId, TaskState.TASK_STATE_WORKING, `${e.agent}: ${e.message_type.replace('_', ' ')}`);
    }
    if (signal?.aborted && this.closing.aborted) yield statusUpdate(taskId, contextId, TaskState.TASK_STATE_WORKING, SHUTTING_DOWN);
  }

  /** The artifacts of a completed workflow, then its one terminal status. */
  private *finish(view: WorkflowView, taskId: string, contextId: string): Generator<AgentExecutionEvent> {
    for (const artifact of artifactsOf(view)) {
      yield AgentEvent.artifactUpdate({ taskId, contextId, artifact, append: false, lastChunk: true, metadata: undefined });
    }
    const ending = endingOf(view);
    yield AgentEvent.statusUpdate({
      taskId,
      contextId,
      metadata: { degraded: view.degraded },
      status: { state: TASK_STATE_OF[view.status], timestamp: view.finished_at ?? new Date().toISOString(), message: ending ? agentMessage(taskId, contextId, ending) : undefined },
    });
  }

  /** Called for a task running in this process: cancel its workflow; `execute` then ends it canceled. */
  async cancelTask(taskId: string): Promise<void> {
    const tenant = this.running.get(taskId);
    const view = tenant ? await this.client.workflow(taskId, tenant) : null;
    if (view) {
      await this.client.cancel(view, 'cancelled through A2A tasks/cancel');
      this.log.info({ correlation_id: taskId }, 'A2A task cancel requested');
    }
  }
}

/** The last word of a task's stream when its ingress shuts down. */
const SHUTTING_DOWN = 'this ingress is shutting down: the task goes on; resubscribe to it (SubscribeToTask, tasks/resubscribe) or get it (GetTask, tasks/get) to follow it';

/** The query options a message may carry in its metadata, named as in the REST API's body. */
const QUERY_OPTIONS = ['deadline_ms', 'top_k', 'profiles', 'require_all'] as const;

/**
 * The query options of a message's metadata (other keys are the client's own and left alone),
 * checked as the REST API checks them: a bad one rejects the task, naming it.
 */
export function queryOptionsOf(metadata: unknown, maxDeadlineMs: number): { options: Partial<Pick<SubmitQuery, (typeof QUERY_OPTIONS)[number]>>; refusal?: string } {
  if (typeof metadata !== 'object' || metadata === null) return { options: {} };
  // A key set to null is as good as absent (the default applies).
  const picked = Object.fromEntries(QUERY_OPTIONS.filter((k) => Object.hasOwn(metadata, k) && (metadata as Record<string, unknown>)[k] !== null).map((k) => [k, (metadata as Record<string, unknown>)[k]]));
  if (Object.keys(picked).length === 0) return { options: {} };
  let errors = flattenValidationErrors(validateSync(plainToInstance(SubmitQueryDto, { query: 'x', ...picked }), { whitelist: true }));
  if (typeof picked.deadline_ms === 'number' && picked.deadline_ms > maxDeadlineMs) {
    // As the REST API says it: the deployment's limit, once, in place of the DTO's own wider bound.
    const cap = `deadline_ms must not be greater than ${maxDeadlineMs}`;
    if (errors.some((f) => f.field === 'deadline_ms')) errors = errors.map((f) => (f.field === 'deadline_ms' ? { ...f, messages: [...new Set(f.messages.map((m) => (/must not be greater than/.test(m) ? cap : m)))] } : f));
    else errors.push({ field: 'deadline_ms', messages: [cap] });
  }
  if (errors.length > 0) return { options: {}, refusal: `invalid metadata: ${errors.map((f) => `${f.field}: ${f.messages.join('; ')}`).join(' | ')}` };
  return { options: picked as Partial<SubmitQuery> };
}

function statusUpdate(taskId: string, contextId: string, state: TaskState, text?: string): AgentExecutionEvent {
  return AgentEvent.statusUpdate({ taskId, contextId, metadata: undefined, status: { state, timestamp: new Date().toISOString(), message: text ? agentMessage(taskId, contextId, text) : undefined } });
}

function invalidQuery(e: InvalidEnvelopeError): string {
  return `invalid query: ${e.errors.map((f) => `${f.field}: ${f.messages.join('; ')}`).join(' | ')}`;
}
