import type { JetStreamManager } from '@nats-io/jetstream';
import type { Subscription } from '@nats-io/transport-node';
import { TERMINAL_STATUSES, workflowFilter, workflowSubject, type WorkflowStatus } from '@chorus/envelope';
import type { NatsConnection } from '@nats-io/transport-node';

/**
 * Workflows this process has seen finish (the hub's terminal `status_update`s), so agents do not
 * start work for a cancelled, failed or timed-out workflow. Bounded: the oldest entries are
 * forgotten first, and a workflow forgotten here is still protected by its deadline and by the
 * hub, which never applies an envelope to a finished workflow.
 */
export class FinishedWorkflows {
  private readonly finished = new Map<string, WorkflowStatus>();
  private readonly sub: Subscription;
  /**
   * When this process began to listen: a workflow that finished before (while the process was
   * down) is unknown here, so an envelope stored before then is looked up ({@link lookup}).
   */
  readonly listeningSince = Date.now();

  constructor(
    nc: NatsConnection,
    private readonly reader?: { jsm: JetStreamManager; stream: string },
    private readonly capacity = 100_000,
  ) {
    this.sub = nc.subscribe(workflowFilter({ messageType: 'status_update' }), {
      callback: (err, msg) => {
        if (err || msg.headers?.get('Chorus-Agent') !== 'hub') return;
        try {
          const env = msg.json<{ tenant_id: string; correlation_id: string; payload?: { workflow_status?: WorkflowStatus } }>();
          const status = env.payload?.workflow_status;
          if (status && TERMINAL_STATUSES.includes(status)) this.add(env.tenant_id, env.correlation_id, status);
        } catch {
          // Not JSON: the consumers dead-letter it; nothing to learn here.
        }
      },
    });
  }

  /** The terminal status of a workflow this process saw finish, if any. */
  statusOf(tenantId: string, correlationId: string): WorkflowStatus | undefined {
    return this.finished.get(`${tenantId}.${correlationId}`);
  }

  /**
   * The terminal status the hub last announced for a workflow, read from the stream (the last
   * `status_update` on its subject), for an envelope older than this process's subscription.
   * Undefined when none is stored, or the last one is not the hub's announcement of an end.
   */
  async lookup(tenantId: string, correlationId: string): Promise<WorkflowStatus | undefined> {
    const known = this.statusOf(tenantId, correlationId);
    if (known || !this.reader) return known;
    const last = await this.reader.jsm.streams.getMessage(this.reader.stream, { last_by_subj: workflowSubject(tenantId, 'status_update', correlationId) });
    if (!last || last.header?.get('Chorus-Agent') !== 'hub') return undefined;
    try {
      const status = last.json<{ payload?: { workflow_status?: WorkflowStatus } }>().payload?.workflow_status;
      if (!status || !TERMINAL_STATUSES.includes(status)) return undefined;
      this.add(tenantId, correlationId, status);
      return status;
    } catch {
      return undefined;
    }
  }

  add(tenantId: string, correlationId: string, status: WorkflowStatus): void {
    const key = `${tenantId}.${correlationId}`;
    this.finished.delete(key);
    this.finished.set(key, status);
    if (this.finished.size > this.capacity) this.finished.delete(this.finished.keys().next().value as string);
  }

  close(): void {
    this.sub.unsubscribe();
  }
}
