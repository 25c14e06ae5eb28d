import { RequestMalformedError } from '@a2a-js/sdk/errors';
import type { ServerCallContext, TaskStore } from '@a2a-js/sdk/server';
import { TaskState } from '@a2a-js/sdk';
import { ChorusClient } from '@chorus/bus';
import { CORRELATION_ID_PATTERN, isTerminalStatus, type WorkflowStatus } from '@chorus/envelope';
import type { Logger } from '@chorus/observability';
import { taskOf, type Task } from './a2a.mapping';
import type { A2AUser } from './a2a.user';
import { isListCursor } from '../list-workflows.dto';

const MAX_SNAPSHOTS = 10_000;
/**
 * What the snapshots may take together, as JSON characters: a finished task holds its answer and
 * results (about 6 KB with the default top_k, 60 KB with top_k 100), and 10,000 of them took up to
 * 600 MB of an ingress that served A2A for an hour. An evicted task is read from its workflow.
 */
export const MAX_SNAPSHOT_CHARS = 64 * 1024 * 1024;
/** Workflows one `ListTasks` page looks at, whatever its filters keep. */
const MAX_LISTED_ROWS = 500;

/** The workflow statuses a task state stands for (`rejected` and the input states: none). */
const WORKFLOW_STATUSES_OF: ReadonlyMap<TaskState, readonly WorkflowStatus[]> = new Map([
  [TaskState.TASK_STATE_SUBMITTED, ['pending']],
  [TaskState.TASK_STATE_WORKING, ['running']],
  [TaskState.TASK_STATE_COMPLETED, ['completed']],
  [TaskState.TASK_STATE_FAILED, ['failed', 'timed_out']],
  [TaskState.TASK_STATE_CANCELED, ['cancelled']],
]);

/**
 * Tasks whose truth is Chorus: a task is its workflow. The snapshots the SDK saves while this
 * process runs a task (its history and artifacts, ending with the executor's own terminal update)
 * are kept in a bounded cache; any other task is read from its workflow, so `tasks/get` answers for
 * workflows another replica ran or that started before a restart. A cancel saved for a task running
 * elsewhere is passed on to Chorus. A task whose executor stopped waiting for the hub (see
 * `markUnconfirmed`) is read from its workflow again once the ledger shows it finished.
 */
export class ChorusTaskStore implements TaskStore {
  private readonly snapshots = new Map<string, { task: Task; chars: number }>();
  /** The snapshots' size together (their JSON's length). */
  private chars = 0;
  /** Keys of snapshots that are not the last word: their executor gave up waiting for the hub. */
  private readonly unconfirmed = new Set<string>();
  /** Keys of tasks this process is starting: the ledger has no record of them to load yet. */
  private readonly starting = new Set<string>();

  constructor(
    private readonly client: ChorusClient,
    private readonly log: Logger,
    private readonly maxChars = MAX_SNAPSHOT_CHARS,
  ) {}

  /** How many snapshots are kept, and their size together (JSON characters). */
  get kept(): { tasks: number; chars: number } {
    return { tasks: this.snapshots.size, chars: this.chars };
  }

  /** Keeps a copy of the task as the newest snapshot, the oldest ones leaving past either bound. */
  private keep(key: string, task: Task): void {
    this.forget(key);
    const copy = structuredClone(task);
    const chars = jsonLength(copy);
    this.snapshots.set(key, { task: copy, chars });
    this.chars += chars;
    while (this.snapshots.size > MAX_SNAPSHOTS || (this.chars > this.maxChars && this.snapshots.size > 1)) {
      const oldest = this.snapshots.keys().next().value as string;
      this.forget(oldest);
      this.unconfirmed.delete(oldest);
    }
  }

  private forget(key: string): void {
    const had = this.snapshots.get(key);
    if (!had) return;
    this.chars -= had.chars;
    this.snapshots.delete(key);
  }

  async save(task: Task, ctx?: ServerCallContext): Promise<void> {
    const tenant = tenantOf(ctx);
    const key = `${tenant}\u0000${task.id}`;
    this.starting.delete(key);
    this.keep(key, task);
    if (task.status?.state === TaskState.TASK_STATE_CANCELED && CORRELATION_ID_PATTERN.test(task.id)) await this.passOnCancel(task, tenant, key);
  }

  /**
   * The SDK cancels a task running in no executor here (started over REST, or by another replica)
   * by saving it canceled, then answers with what the store then loads. So the cancel is passed on
   * to Chorus, and the snapshot becomes the hub's outcome: the workflow may have ended otherwise
   * first (it completed meanwhile: the SDK then answers "not cancelable"). The snapshot said
   * canceled whatever happened, for good. An outcome the hub does not confirm within
   * CHORUS_TERMINAL_GRACE_MS leaves it canceled, to be read again from the ledger (as `markUnconfirmed`).
   */
  private async passOnCancel(task: Task, tenant: string, key: string): Promise<void> {
    const ending = this.client.waitForTerminal(tenant, task.id, new Date());
    try {
      let view = await this.client.workflow(task.id, tenant);
      if (view && !isTerminalStatus(view.status)) {
        await this.client.cancel(view, 'cancelled through A2A tasks/cancel');
        this.log.info({ correlation_id: task.id }, 'A2A cancel passed on to Chorus');
        // The end announced, or (announced before the subscription, or not within the grace) as the ledger has it now.
        view = (await ending.done) ?? (await this.client.workflow(task.id, tenant).catch(() => null));
      }
      if (!view || !isTerminalStatus(view.status)) {
        if (this.snapshots.has(key)) this.unconfirmed.add(key);
      }
      else if (view.status !== 'cancelled') this.keep(key, { ...taskOf(view, task.contextId), history: task.history });
    } finally {
      ending.cancel();
    }
  }

  async load(taskId: string, ctx?: ServerCallContext): Promise<Task | undefined> {
    // The SDK's 0.3 layer hands on a message's referenceTaskIds unchecked: 5 is no task (the
    // pattern alone would read it as "5" and ask the ledger, which refuses a number).
    if (typeof taskId !== 'string' || !CORRELATION_ID_PATTERN.test(taskId)) return undefined;
    const tenant = tenantOf(ctx);
    const key = `${tenant}\u0000${taskId}`;
    const snapshot = this.snapshots.get(key)?.task;
    if (snapshot && this.unconfirmed.has(key)) {
      const view = await this.client.workflow(taskId, tenant).catch(() => null);
      if (view && isTerminalStatus(view.status)) {
        // The outcome, in the client's context and with the task's history; the ledger is asked no more.
        const recovered: Task = { ...taskOf(view, snapshot.contextId), history: snapshot.history };
        this.keep(key, recovered);
        this.unconfirmed.delete(key);
        return structuredClone(recovered);
      }
    }
    if (snapshot) return structuredClone(snapshot);
    // A task being created here is new: nothing to ask the hub (which may be down) about.
    if (this.starting.has(key)) return undefined;
    const view = await this.client.workflow(taskId, tenant);
    // Its context is the session the workflow kept (the executor stores it); else the task id.
    return view ? taskOf(view, view.session_id ?? taskId) : undefined;
  }

  /** The executor is about to create this task: loading it before its first save finds nothing, at once. */
  markStarting(taskId: string, tenant: string): void {
    this.starting.add(`${tenant}\u0000${taskId}`);
    // Bounded like the snapshots: an entry the SDK never saves must not stay for ever.
    if (this.starting.size > MAX_SNAPSHOTS) this.starting.delete(this.starting.values().next().value as string);
  }

  /**
   * The executor of this task stopped waiting for the hub to confirm its end: from now on, loading
   * it asks the ledger first, so `tasks/get` shows the outcome once the hub has recorded it.
   */
  markUnconfirmed(taskId: string, tenant: string): void {
    // A task with no snapshot (evicted) is read from its workflow anyway; its key would stay here for good.
    const key = `${tenant}\u0000${taskId}`;
    if (this.snapshots.has(key)) this.unconfirmed.add(key);
  }

  /**
   * `ListTasks`, newest first, from the hub's list of the tenant's workflows: filtered by status
   * (the hub filters by the workflow status when one stands for it), by `contextId` (the workflow's
   * session) and by `statusTimestampAfter`, paged with the hub's cursor as `nextPageToken`. A page
   * looks at no more than MAX_LISTED_ROWS workflows, so a rare filter can give a short or empty
   * page with a token to go on. Rejected tasks start no workflow, so none is listed. The total is
   * not counted beyond the page (it would read every workflow): `totalSize` is the page's size.
   */
  async list(params: { pageSize?: number; pageToken?: string; status?: TaskState; contextId?: string; statusTimestampAfter?: string }, ctx?: ServerCallContext) {
    const tenant = tenantOf(ctx);
    const wanted = Math.min(params.pageSize ?? 50, 100);
    const state = params.status || undefined;
    const statuses = state === undefined ? undefined : WORKFLOW_STATUSES_OF.get(state) ?? [];
    if (statuses?.length === 0) return { tasks: [], nextPageToken: '', pageSize: wanted, totalSize: 0 };
    if (params.pageToken && !isListCursor(params.pageToken)) throw new RequestMalformedError('pageToken must be the nextPageToken of a previous ListTasks');
    const after = params.statusTimestampAfter ? Date.parse(params.statusTimestampAfter) : undefined;
    const tasks: Task[] = [];
    let cursor = params.pageToken || undefined;
    for (let looked = 0; tasks.length < wanted && looked < MAX_LISTED_ROWS; ) {
      const limit = Math.min(wanted - tasks.length, MAX_LISTED_ROWS - looked);
      const page = await this.client.list({ tenant_id: tenant, status: statuses?.length === 1 ? statuses[0] : undefined, limit, cursor });
      looked += page.workflows.length;
      const rows = page.workflows.filter((row) => !statuses || statuses.includes(row.status));
      // The page's tasks read at once (the hub reads workflows from its bucket, not the stream), kept in order.
      for (const task of await Promise.all(rows.map((row) => this.load(row.correlation_id, ctx)))) {
        if (!task || (params.contextId && task.contextId !== params.contextId)) continue;
        if (after !== undefined && !(Date.parse(task.status?.timestamp ?? '') >= after)) continue;
        tasks.push(task);
      }
      cursor = page.next_cursor ?? undefined;
      if (!cursor) break;
    }
    return { tasks, nextPageToken: cursor ?? '', pageSize: wanted, totalSize: tasks.length };
  }
}

/** The length of a task's JSON; 0 for one that has none (it is then bounded by the count alone). */
function jsonLength(task: Task): number {
  try {
    return JSON.stringify(task)?.length ?? 0;
  } catch {
    return 0;
  }
}

function tenantOf(ctx?: ServerCallContext): string {
  return (ctx?.user as A2AUser | undefined)?.tenant ?? 'default';
}
