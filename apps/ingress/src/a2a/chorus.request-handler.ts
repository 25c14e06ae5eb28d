import { TaskState, type AgentCard, type Message, type SendMessageRequest, type StreamResponse, type SubscribeToTaskRequest, type Task } from '@a2a-js/sdk';
import { RequestMalformedError, TaskNotFoundError, UnsupportedOperationError } from '@a2a-js/sdk/errors';
import { DefaultExecutionEventBusManager, DefaultRequestHandler, ExecutionEventQueue, type ServerCallContext } from '@a2a-js/sdk/server';
import type { ChorusClient } from '@chorus/bus';
import { TERMINAL_TASK_STATES } from './a2a.mapping';
import type { A2AUser } from './a2a.user';
import type { ChorusExecutor } from './chorus.executor';
import type { ChorusTaskStore } from './chorus.task-store';

/**
 * @a2a-js/sdk 1.3.0 answers `tasks/resubscribe` / `SubscribeToTask` from the events of an
 * execution running in this process (the event bus its ExecutionEventBusManager holds for the
 * task): with none, it sends the task as the store loads it and ends the stream there. A Chorus task
 * is a workflow, which may have been started over REST or by another ingress replica, so such a
 * task, if still running, is followed here on the bus, as the executor follows one it starts, to
 * the same artifacts and one terminal status. What the SDK does itself stays its own: refusing an
 * unknown or already finished task (as A2A 1.0 has it), and the events a task running here
 * streams (read here from the task's event bus, as the SDK reads them, to stop when the client leaves).
 *
 * It ends with the workflow, when its client goes away or the ingress shuts down (the SDK does not
 * say so; the caller's `A2AUser.gone` does), or CHORUS_WATCH_GRACE_MS after its deadline if the hub
 * never confirms an end (a task whose deadline the ledger cannot give is not followed).
 */
export class ChorusRequestHandler extends DefaultRequestHandler {
  constructor(
    card: AgentCard,
    private readonly store: ChorusTaskStore,
    private readonly chorus: ChorusExecutor,
    private readonly client: ChorusClient,
    /** The SDK's, kept here too: it is private to DefaultRequestHandler. */
    private readonly buses = new DefaultExecutionEventBusManager(),
  ) {
    super(card, store, chorus, buses);
  }

  override async sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    await this.refuseFollowUp(params, context);
    return super.sendMessage(params, context).catch((e: unknown) => {
      throw nameTerminalState(e);
    });
  }

  override async *sendMessageStream(params: SendMessageRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    await this.refuseFollowUp(params, context);
    try {
      yield* super.sendMessageStream(params, context);
    } catch (e) {
      throw nameTerminalState(e);
    }
  }

  /**
   * A Chorus task runs the one query it was started with and never asks for input, so a message
   * naming a task that has not finished is refused (UnsupportedOperation), the task untouched. The
   * SDK would have run it as a second execution of the same task: the task went back to
   * `submitted` (or to `rejected`, for a message without text) while its workflow ran on, the new
   * text was dropped as a duplicate query, and its subscribers got every later event twice. An
   * unknown or finished task is left to the SDK, which refuses it as A2A has it.
   */
  private async refuseFollowUp(params: SendMessageRequest, context: ServerCallContext): Promise<void> {
    const taskId = params.message?.taskId;
    if (typeof taskId !== 'string' || taskId === '') return;
    const task = await this.store.load(taskId, context);
    if (!task || TERMINAL_TASK_STATES.includes(task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED)) return;
    throw new UnsupportedOperationError(
      `Task ${taskId} is still running its query; a Chorus task takes one message. Send a new message without taskId (referenceTaskIds may name this task), or cancel this one.`,
    );
  }

  /**
   * The error the SDK's resubscribe would refuse a subscription to `taskId` with (no id, an unknown
   * task, a finished one: its checks and words, the state named), or undefined when it would not.
   * Asked before the SDK's express handler opens the stream: a refusal thrown from inside the stream
   * is answered right, but the handler first prints it, stack and all, with console.error, which
   * breaks the process's JSON log lines (see refuseEndedSubscriptions in a2a.mount.ts).
   */
  async subscriptionRefusal(taskId: string, context: ServerCallContext): Promise<Error | undefined> {
    if (taskId.trim() === '') return new RequestMalformedError('Task ID is required');
    const task = await this.store.load(taskId, context);
    if (!task) return new TaskNotFoundError(`Task not found: ${taskId}`);
    const state = task.status?.state;
    if (state === undefined || !TERMINAL_TASK_STATES.includes(state)) return undefined;
    return nameTerminalState(new UnsupportedOperationError(`Task ${taskId} is in a terminal state (${state}) and cannot be subscribed to.`)) as Error;
  }

  override async *resubscribe(params: SubscribeToTaskRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    const user = context.user as A2AUser | undefined;
    // A task running here streams the events of its execution, as the SDK streams them, from a
    // queue opened before the task is loaded (so nothing falls between the two), but one that is
    // closed when the client leaves: the SDK's stays on the task's event bus until the task ends,
    // and fifteen resubscribers that came and went exceeded the bus's listener limit.
    const bus = this.buses.getByTaskId(params.id, context);
    const queue = bus ? new ExecutionEventQueue(bus) : undefined;
    const leave = () => queue?.stop();
    user?.gone?.addEventListener('abort', leave, { once: true });
    if (user?.gone?.aborted) leave();
    let task: { id: string; contextId: string } | undefined;
    try {
      // The SDK's checks (an unknown or finished task) and its snapshot of the task, then no more of its stream.
      const sdk = super.resubscribe(params, context);
      try {
        const first = await sdk.next();
        if (!first.done) {
          if (first.value.payload?.$case === 'task') task = first.value.payload.value;
          yield first.value;
        }
      } catch (e) {
        throw nameTerminalState(e);
      } finally {
        await sdk.return(undefined);
      }
      if (queue) {
        if (task) yield* eventsOf(queue, params.id);
        return;
      }
    } finally {
      queue?.stop();
      user?.gone?.removeEventListener('abort', leave);
    }
    const tenant = user?.tenant;
    if (!task || !tenant || user.gone?.aborted) return;
    // The deadline bounds the wait for a hub that never confirms the end while the client stays;
    // the ledger has it. Without it there is no bound: not followed.
    const view = await this.client.workflow(task.id, tenant).catch(() => null);
    if (!view) return;
    for await (const event of this.chorus.follow(task.id, task.contextId, tenant, view.deadline, user.gone)) {
      if (event.kind === 'statusUpdate') yield { payload: { $case: 'statusUpdate', value: event.data } };
      else if (event.kind === 'artifactUpdate') yield { payload: { $case: 'artifactUpdate', value: event.data } };
    }
  }
}

/** A task's stream responses from its execution's events, as the SDK's resubscribe maps them, until the task ends or the queue is stopped. */
async function* eventsOf(queue: ExecutionEventQueue, taskId: string): AsyncGenerator<StreamResponse> {
  for await (const event of queue.events()) {
    if (event.kind === 'statusUpdate' && event.data.taskId === taskId) yield { payload: { $case: 'statusUpdate', value: event.data } };
    else if (event.kind === 'artifactUpdate' && event.data.taskId === taskId) yield { payload: { $case: 'artifactUpdate', value: event.data } };
    else if (event.kind === 'task' && event.data.id === taskId) yield { payload: { $case: 'task', value: event.data } };
  }
}

/**
 * The SDK refuses to resubscribe to, or send a message to, a finished task naming its state by the
 * enum's number ("is in a terminal state (5)"); a client knows states by name, as the wire carries
 * them in A2A 0.3 ("canceled"). The error keeps its class, so its JSON-RPC code is unchanged.
 */
function nameTerminalState(e: unknown): unknown {
  if (e instanceof Error) {
    e.message = e.message.replace(/terminal state \((\d+)\)/, (whole, n: string) => {
      const name = (TaskState as unknown as Record<number, string | undefined>)[Number(n)];
      return name ? `terminal state (${name.replace(/^TASK_STATE_/, '').toLowerCase()})` : whole;
    });
  }
  return e;
}
