import { randomUUID } from 'node:crypto';
import { Role, TaskState } from '@a2a-js/sdk';
import type { AgentExecutionEvent } from '@a2a-js/sdk/server';
import type { WorkflowStatus, WorkflowView } from '@chorus/envelope';

/** The A2A shapes we build (the SDK's types require every key). */
type Task = Extract<AgentExecutionEvent, { kind: 'task' }>['data'];
type Message = NonNullable<NonNullable<Task['status']>['message']>;
type Part = Message['parts'][number];
type Artifact = Task['artifacts'][number];

export type { Artifact, Message, Part, Task };

/** How a workflow's status reads as an A2A task state. */
export const TASK_STATE_OF: Record<WorkflowStatus, TaskState> = {
  pending: TaskState.TASK_STATE_SUBMITTED,
  running: TaskState.TASK_STATE_WORKING,
  completed: TaskState.TASK_STATE_COMPLETED,
  failed: TaskState.TASK_STATE_FAILED,
  timed_out: TaskState.TASK_STATE_FAILED,
  cancelled: TaskState.TASK_STATE_CANCELED,
};

export const TERMINAL_TASK_STATES: readonly TaskState[] = [
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
];

export function textPart(value: string): Part {
  return { content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: 'text/plain' } as Part;
}

export function dataPart(value: unknown): Part {
  return { content: { $case: 'data', value }, metadata: undefined, filename: '', mediaType: 'application/json' } as Part;
}

export function agentMessage(taskId: string, contextId: string, text: string): Message {
  return {
    messageId: randomUUID(),
    taskId,
    contextId,
    role: Role.ROLE_AGENT,
    parts: [textPart(text)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  } as Message;
}

/**
 * The text of a user's message (its text parts, joined). The SDK passes a part's `text` on unchecked:
 * one that is not a string (`"text": 5`) is no text, not the query "5".
 */
export function textOf(message: { parts?: Array<{ content?: { $case: string; value?: unknown } }> } | undefined): string {
  return (message?.parts ?? [])
    .map((p) => (p.content?.$case === 'text' && typeof p.content.value === 'string' ? p.content.value : ''))
    .join('\n')
    .trim();
}

/** A finished workflow's result as A2A artifacts: the answer as text, the ranked results as data. */
export function artifactsOf(view: WorkflowView): Artifact[] {
  if (!view.result) return [];
  return [
    {
      artifactId: 'answer',
      name: 'answer',
      description: 'A short extractive answer; [n] cites the n-th result',
      parts: [textPart(view.result.answer)],
      metadata: undefined,
      extensions: [],
    } as Artifact,
    {
      artifactId: 'results',
      name: 'results',
      description: 'Ranked results with per-profile ranks and provenance',
      parts: [dataPart({ results: view.result.results, provenance: view.result.provenance })],
      metadata: undefined,
      extensions: [],
    } as Artifact,
  ];
}

/** Why a workflow ended, in words, for a failed or cancelled task's status message. */
export function endingOf(view: WorkflowView): string | null {
  if (view.status === 'timed_out') return `timed out: no response by the workflow's deadline ${view.deadline}`;
  if (view.status === 'failed') {
    const e = view.errors[view.errors.length - 1];
    return e ? `failed: ${e.agent}${e.step ? ` handling ${e.step}` : ''}: [${e.error_type}] ${e.error_message}` : 'failed';
  }
  if (view.status === 'cancelled') return 'cancelled';
  return null;
}

/** A task built from the hub's view of its workflow alone (another replica ran it, or a restart). */
export function taskOf(view: WorkflowView, contextId: string): Task {
  const ending = endingOf(view);
  return {
    id: view.correlation_id,
    contextId,
    status: {
      state: TASK_STATE_OF[view.status],
      message: ending ? agentMessage(view.correlation_id, contextId, ending) : undefined,
      timestamp: view.finished_at ?? view.updated_at,
    },
    artifacts: artifactsOf(view),
    history: [],
    metadata: { correlation_id: view.correlation_id, status_url: `/v1/workflows/${view.correlation_id}`, degraded: view.degraded },
  } as Task;
}
