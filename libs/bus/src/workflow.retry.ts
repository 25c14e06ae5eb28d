import { createEnvelope, retryBudgetMs, retryRefusal, type WorkflowView } from '@chorus/envelope';
import { askUntil } from './ask-until';
import { NotRecordedYetError, RetryRefusedError } from './bus.errors';
import type { Bus } from './nats.bus';

/** A retry asked for: the new workflow that runs the retried one's request again. */
export interface RetryStarted {
  /** The retry's own id (`correlationIdForRetry` of the retried workflow). */
  correlation_id: string;
  tenant_id: string;
  /** The workflow it retries. */
  retry_of: string;
  /** The retry's deadline, as the hub recorded it: the retried workflow's time budget from when it started the retry. */
  deadline: string;
  /** True when the workflow had been retried already; that retry is the answer, nothing new starts. */
  duplicate: boolean;
}

/** The reads a retry makes through the hub (ChorusClient's). */
export interface WorkflowReader {
  workflow(correlationId: string, tenantId?: string): Promise<WorkflowView | null>;
  find(correlationId: string, tenantId: string | undefined, options: { acceptedWithinMs: number }): Promise<WorkflowView | null>;
}

/** What a retry needs to know of the workflow it retries (its view from the hub). */
export type RetryTarget = Pick<WorkflowView, 'correlation_id' | 'tenant_id' | 'status' | 'degraded' | 'retried_as' | 'deadline' | 'started_at'>;

/** How long `retry` waits for the hub to apply the command (a finished workflow's write is not held back). */
export const RETRY_DECISION_WAIT_MS = 5000;

/**
 * Asks the hub to retry a workflow that ended without a complete answer: it starts a new workflow
 * (`correlationIdForRetry` of this one) with the same request and time budget, and links the two
 * (`retried_as`, `retry_of`). Resolves with the retry once the hub has recorded it, so its id can be
 * followed at once; a refusal, checked here first ({@link retryRefusal}) and then as the hub
 * records it, is a RetryRefusedError. A workflow retried already answers with that retry
 * (`duplicate`). A hub that has not applied the command within a few seconds is a
 * NotRecordedYetError: ask again, which asks for the same retry.
 */
export async function requestRetry(client: WorkflowReader, bus: Bus, agent: string, workflow: RetryTarget, reason: string): Promise<RetryStarted> {
  const refusal = retryRefusal(workflow);
  if (refusal) throw new RetryRefusedError('NOT_RETRYABLE', workflow.correlation_id, refusal);
  if (workflow.retried_as) return retryOf(client, workflow, null);
  const command = createEnvelope({
    messageType: 'orchestration_command',
    correlationId: workflow.correlation_id,
    tenantId: workflow.tenant_id,
    agent,
    // The retry's: the hub gives it the same budget from when it applies the command.
    deadline: new Date(Date.now() + retryBudgetMs(workflow)),
    targetAgent: 'hub',
    payload: { command: 'retry', reason },
  });
  // Each request its own key: a retry refused while the workflow ran may be asked for again.
  await bus.publish(command, { part: `retry-${command.message_id}` });
  // The hub's decision is the command recorded as a step, with the retry or the refusal.
  const decided = await askUntil(Date.now() + RETRY_DECISION_WAIT_MS, async () => {
    const view = await client.workflow(workflow.correlation_id, workflow.tenant_id);
    return view?.steps.some((s) => s.message_id === command.message_id) ? view : null;
  });
  if (!decided) throw new NotRecordedYetError(workflow.correlation_id, `the retry of workflow ${workflow.correlation_id} was asked for, but the hub has not applied it yet; ask again shortly (for the same retry)`);
  if (!decided.retried_as) {
    const error = decided.errors.find((e) => e.message_id === command.message_id);
    const code = error?.error_type === 'RETRY_IMPOSSIBLE' ? 'RETRY_IMPOSSIBLE' : 'NOT_RETRYABLE';
    throw new RetryRefusedError(code, workflow.correlation_id, error?.error_message ?? `the hub did not retry workflow ${workflow.correlation_id}`);
  }
  return retryOf(client, decided, command.message_id);
}

/** The retry the workflow names; `duplicate` unless the command `commandId` started it. */
async function retryOf(client: WorkflowReader, workflow: Pick<WorkflowView, 'correlation_id' | 'tenant_id' | 'retried_as'>, commandId: string | null): Promise<RetryStarted> {
  const id = workflow.retried_as!;
  // Recorded a moment after the retried workflow names it (its query is in the stream by then).
  const retry = await client.find(id, workflow.tenant_id, { acceptedWithinMs: Number.POSITIVE_INFINITY });
  if (!retry) throw new RetryRefusedError('NOT_RETRYABLE', workflow.correlation_id, `workflow ${workflow.correlation_id} was retried as ${id}, which has left the ledger`);
  const cause = retry.steps.find((s) => s.message_type === 'query')?.causation_id;
  return { correlation_id: id, tenant_id: workflow.tenant_id, retry_of: workflow.correlation_id, deadline: retry.deadline, duplicate: cause !== commandId };
}
