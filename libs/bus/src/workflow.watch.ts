import { isTerminalStatus, parseEnvelope, workflowFilter, type Envelope, type StatusUpdatePayload, type WorkflowStatus } from '@chorus/envelope';
import type { Bus } from './nats.bus';
import { readWorkflowHistory } from './workflow.history';

/** What watching a workflow yields: its envelopes in order, then (once) how it ended. */
export type WorkflowEvent =
  | { kind: 'envelope'; envelope: Envelope }
  | { kind: 'terminal'; status: WorkflowStatus };

/**
 * A workflow's envelopes as they happen: the ones already stored first (read back from the stream),
 * then the live ones, each once, ending after the hub's terminal status update. Subscribes before
 * reading the stored ones, so nothing published in between is missed.
 */
export async function* watchWorkflow(
  bus: Bus,
  tenantId: string,
  correlationId: string,
  options: { since?: Date; signal?: AbortSignal } = {},
): AsyncGenerator<WorkflowEvent> {
  const live: Envelope[] = [];
  let wake: (() => void) | undefined;
  const sub = bus.nc.subscribe(workflowFilter({ tenantId, correlationId }), {
    callback: (_e, m) => {
      const parsed = parseEnvelope(m.data, { subject: m.subject });
      if (!parsed.ok) return;
      live.push(parsed.value);
      wake?.();
    },
  });
  const onAbort = () => wake?.();
  options.signal?.addEventListener('abort', onAbort);
  try {
    await bus.nc.flush();
    const seen = new Set<string>();
    const stored = await readWorkflowHistory(bus, correlationId, { tenantId, since: options.since });
    for (const entry of stored) {
      const parsed = parseEnvelope(entry.envelope, { subject: entry.subject });
      if (!parsed.ok) continue;
      seen.add(parsed.value.message_id);
      yield { kind: 'envelope', envelope: parsed.value };
      const end = terminalStatusOf(parsed.value);
      if (end) return yield { kind: 'terminal', status: end };
    }
    while (!options.signal?.aborted) {
      const next = live.shift();
      if (!next) {
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
        continue;
      }
      if (seen.has(next.message_id)) continue;
      seen.add(next.message_id);
      yield { kind: 'envelope', envelope: next };
      const end = terminalStatusOf(next);
      if (end) return yield { kind: 'terminal', status: end };
    }
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
    sub.unsubscribe();
  }
}

/** The terminal status an envelope announces: only the hub's status updates end a workflow. */
export function terminalStatusOf(envelope: Envelope): WorkflowStatus | null {
  if (envelope.message_type !== 'status_update' || envelope.agent !== 'hub') return null;
  const status = (envelope.payload as StatusUpdatePayload).workflow_status;
  return isTerminalStatus(status) ? status : null;
}
