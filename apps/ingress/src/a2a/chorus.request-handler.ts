import { TaskState, type AgentCard, type Message, type SendMessageRequest, type StreamResponse, type SubscribeToTaskRequest, type Task } from '@a2a-js/sdk';
import { DefaultExecutionEventBusManager, DefaultRequestHandler, type ServerCallContext } from '@a2a-js/sdk/server';
import type { ChorusClient } from '@chorus/bus';
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
 * unknown or already finished task (as A2A 1.0 has it), and streaming a task running here.
 *
 * It ends with the workflow, when its client goes away (the SDK does not say so; the caller's
 * `A2AUser.gone` does), or CHORUS_WATCH_GRACE_MS after its deadline if the hub never confirms an end
 * (a task whose deadline the ledger cannot give is not followed).
 */
export class ChorusRequestHandler extends DefaultRequestHandler {
  constructor(
    card: AgentCard,
    store: ChorusTaskStore,
    private readonly chorus: ChorusExecutor,
    private readonly client: ChorusClient,
    /** The SDK's, kept here too: it is private to DefaultRequestHandler. */
    private readonly buses = new DefaultExecutionEventBusManager(),
  ) {
    super(card, store, chorus, buses);
  }

  override sendMessage(params: SendMessageRequest, context: ServerCallContext): Promise<Message | Task> {
    return super.sendMessage(params, context).catch((e: unknown) => {
      throw nameTerminalState(e);
    });
  }

  override async *sendMessageStream(params: SendMessageRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    try {
      yield* super.sendMessageStream(params, context);
    } catch (e) {
      throw nameTerminalState(e);
    }
  }

  override async *resubscribe(params: SubscribeToTaskRequest, context: ServerCallContext): AsyncGenerator<StreamResponse, void, undefined> {
    // Asked in the same tick as the SDK asks: a task running here is left to the SDK's stream.
    const runningHere = this.buses.getByTaskId(params.id, context) !== undefined;
    let task: { id: string; contextId: string } | undefined;
    try {
      for await (const response of super.resubscribe(params, context)) {
        if (response.payload?.$case === 'task') task ??= response.payload.value;
        yield response;
      }
    } catch (e) {
      throw nameTerminalState(e);
    }
    const user = context.user as A2AUser | undefined;
    const tenant = user?.tenant;
    if (runningHere || !task || !tenant || user.gone?.aborted) return;
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
