import {
  HubSubjects,
  isTerminalStatus,
  parseEnvelope,
  workflowFilter,
  type Envelope,
  type StatusUpdatePayload,
  type WorkflowStatus,
  type WorkflowView,
} from '@chorus/envelope';
import type { Bus } from './nats.bus';
import { requestReply } from './request-reply';
import { readWorkflowHistory } from './workflow.history';

/** What watching a workflow yields: its envelopes in order, then (once) how it ended, as the hub's ledger has it. */
export type WorkflowEvent =
  | { kind: 'envelope'; envelope: Envelope }
  | { kind: 'terminal'; status: WorkflowStatus; view: WorkflowView };

/**
 * After an announcement the ledger does not confirm yet, how often the watcher asks again: every
 * second for the first half minute (the hub announces before it saves, and retries a failed save
 * for about that long), then every 5 s until it does. The hub's repeat of the announcement, once
 * saved, is dropped as a duplicate, so no new envelope would wake the watcher.
 */
const CLAIM_RECHECK_MS = 30_000;
const RECHECK_EVERY_MS = 1000;
const RECHECK_SLOWLY_EVERY_MS = 5000;

/**
 * A workflow's envelopes as they happen: the ones already stored first (read back from the stream),
 * then the live ones, each once, ending once the hub's ledger shows the workflow finished.
 * Subscribes before reading the stored ones, so nothing published in between is missed.
 *
 * A `status_update` from agent `hub` only prompts the question: any client allowed to publish a
 * status update can claim to be the hub (NATS does not tell a message's publisher), so the watch
 * ends on the ledger's answer, never on the claim.
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
  /** When an announcement the ledger did not confirm was seen (null: none pending). */
  let claimedAt: number | null = null;
  const ended = async (envelope: Envelope | null): Promise<WorkflowView | null> => {
    if (envelope && terminalStatusOf(envelope)) claimedAt = Date.now();
    if (claimedAt === null) return null;
    return confirmEnded(bus, tenantId, correlationId, { attempts: envelope ? 20 : 1, signal: options.signal });
  };
  try {
    await bus.nc.flush();
    const seen = new Set<string>();
    const stored = await readWorkflowHistory(bus, correlationId, { tenantId, since: options.since });
    for (const entry of stored) {
      const parsed = parseEnvelope(entry.envelope, { subject: entry.subject });
      if (!parsed.ok) continue;
      seen.add(parsed.value.message_id);
      yield { kind: 'envelope', envelope: parsed.value };
      const view = await ended(parsed.value);
      if (view) return yield { kind: 'terminal', status: view.status, view };
    }
    while (!options.signal?.aborted) {
      const next = live.shift();
      if (!next) {
        const timedOut = await new Promise<boolean>((resolve) => {
          const every = claimedAt !== null && Date.now() - claimedAt > CLAIM_RECHECK_MS ? RECHECK_SLOWLY_EVERY_MS : RECHECK_EVERY_MS;
          const timer = claimedAt === null ? undefined : setTimeout(() => resolve(true), every);
          wake = () => {
            clearTimeout(timer);
            resolve(false);
          };
        });
        wake = undefined;
        if (timedOut) {
          const view = await ended(null);
          if (view) return yield { kind: 'terminal', status: view.status, view };
        }
        continue;
      }
      if (seen.has(next.message_id)) continue;
      seen.add(next.message_id);
      yield { kind: 'envelope', envelope: next };
      const view = await ended(next);
      if (view) return yield { kind: 'terminal', status: view.status, view };
    }
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
    sub.unsubscribe();
  }
}

/** The terminal status an envelope claims: only the hub's status updates end a workflow (once its ledger agrees). */
export function terminalStatusOf(envelope: Envelope): WorkflowStatus | null {
  if (envelope.message_type !== 'status_update' || envelope.agent !== 'hub') return null;
  const status = (envelope.payload as StatusUpdatePayload).workflow_status;
  return isTerminalStatus(status) ? status : null;
}

/**
 * The hub's view of a workflow once its ledger shows it finished, asked up to `attempts` times, 4 ms
 * apart at first, doubling up to `intervalMs` (50 ms): the hub announces a status just before it
 * saves it. Null if the ledger does not show that by then, or the hub cannot be asked.
 */
export async function confirmEnded(
  bus: Bus,
  tenantId: string,
  correlationId: string,
  options: { attempts?: number; intervalMs?: number; signal?: AbortSignal } = {},
): Promise<WorkflowView | null> {
  const attempts = options.attempts ?? 20;
  for (let i = 0; i < attempts && !options.signal?.aborted; i++) {
    // The save follows the announcement by a millisecond or two: ask again soon, then every intervalMs.
    if (i > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(options.intervalMs ?? 50, 2 ** (i + 1))));
    try {
      const view = await requestReply<WorkflowView>(bus, HubSubjects.Workflow, { correlation_id: correlationId, tenant_id: tenantId }, bus.options.requestTimeoutMs);
      if (isTerminalStatus(view.status)) return view;
    } catch {
      // Not known yet, or the hub is not answering: ask again, and in the end do not end the watch.
    }
  }
  return null;
}
