import {
  HubSubjects,
  isTerminalStatus,
  parseEnvelope,
  workflowFilter,
  workflowSubject,
  type Envelope,
  type StatusUpdatePayload,
  type WorkflowStatus,
  type WorkflowView,
} from '@chorus/envelope';
import type { Bus } from './nats.bus';
import { HUB_READ, requestReply } from './request-reply';
import { readWorkflowHistory } from './workflow.history';

/**
 * What watching a workflow yields: its envelopes in order, then once either how it ended, as the
 * hub's ledger has it, or (with `giveUpAfterDeadlineMs`) that the ledger had not confirmed an end
 * that long after the workflow's deadline: the hub is down or cut off, and the outcome is unknown.
 */
export type WorkflowEvent =
  | { kind: 'envelope'; envelope: Envelope }
  | { kind: 'terminal'; status: WorkflowStatus; view: WorkflowView }
  | { kind: 'unconfirmed'; deadline: string; reason: string };

/**
 * After an announcement the ledger does not confirm yet, how often the watcher asks again: every
 * second for the first half minute (the hub announces before it saves, and retries a failed save
 * for about that long), then every 5 s until it does. The hub's repeat of the announcement, once
 * saved, is dropped as a duplicate, so no new envelope would wake the watcher.
 */
const CLAIM_RECHECK_MS = 30_000;
const RECHECK_EVERY_MS = 1000;
const RECHECK_SLOWLY_EVERY_MS = 5000;
/** setTimeout's longest delay (about 24.8 days); a longer wait just wakes and waits again. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * A workflow's envelopes as they happen: the ones already stored first (read back from the stream),
 * then the live ones, each once, ending once the hub's ledger shows the workflow finished.
 * Subscribes before reading the stored ones, so nothing published in between is missed.
 *
 * A `status_update` from agent `hub` only prompts the question: any client allowed to publish a
 * status update can claim to be the hub (NATS does not tell a message's publisher), so the watch
 * ends on the ledger's answer, never on the claim.
 *
 * Without `giveUpAfterDeadlineMs` a watch whose hub never answers again lasts until `signal` aborts
 * it. With it, the watch ends that long after the workflow's deadline with one `unconfirmed` event,
 * after a last question to the hub: once nothing it received is left to look at and no claim of an
 * end is still being checked (those get their 30 s). The deadline is `deadline` (the hub's view
 * has it), else the earliest its envelopes carry, so an envelope claiming a later one cannot keep
 * the watch open.
 */
export async function* watchWorkflow(
  bus: Bus,
  tenantId: string,
  correlationId: string,
  options: { since?: Date; signal?: AbortSignal; giveUpAfterDeadlineMs?: number; deadline?: string } = {},
): AsyncGenerator<WorkflowEvent> {
  // With the idempotency key each was published under: a core subscription also hears a re-publish
  // that the stream dropped as a duplicate (another message_id, the same key), which is no step.
  const live: Array<{ envelope: Envelope; key: string | undefined }> = [];
  let wake: (() => void) | undefined;
  const sub = bus.nc.subscribe(workflowFilter({ tenantId, correlationId }), {
    callback: (_e, m) => {
      const parsed = parseEnvelope(m.data, { subject: m.subject });
      if (!parsed.ok) return;
      live.push({ envelope: parsed.value, key: m.headers?.get('Nats-Msg-Id') || undefined });
      wake?.();
    },
  });
  const onAbort = () => wake?.();
  options.signal?.addEventListener('abort', onAbort);
  /** When an announcement the ledger did not confirm was seen (null: none pending). */
  let claimedAt: number | null = null;
  /** The workflow's deadline: the caller's, else the earliest its envelopes carry (every hop carries it unchanged). */
  let deadline: string | null = options.deadline ?? null;
  const noteDeadline = (envelope: Envelope): void => {
    if (options.deadline !== undefined) return;
    if (deadline === null || Date.parse(envelope.deadline) < Date.parse(deadline)) deadline = envelope.deadline;
  };
  const giveUpAt = (): number => (deadline === null || options.giveUpAfterDeadlineMs === undefined ? Infinity : Date.parse(deadline) + options.giveUpAfterDeadlineMs);
  const claimPending = (): boolean => claimedAt !== null && Date.now() - claimedAt < CLAIM_RECHECK_MS;
  const ended = async (envelope: Envelope | null): Promise<WorkflowView | null> => {
    if (envelope) noteDeadline(envelope);
    // The first claim starts the 30 s of rechecks; repeated claims (a client posing as the hub) do not extend them.
    if (envelope && terminalStatusOf(envelope)) claimedAt ??= Date.now();
    if (claimedAt === null) return null;
    // Past the give-up time a claim gets one question per round, not twenty.
    return confirmEnded(bus, tenantId, correlationId, { attempts: envelope ? 20 : 1, signal: options.signal, until: giveUpAt() });
  };
  try {
    await bus.nc.flush();
    const seen = new Set<string>();
    const seenKeys = new Set<string>();
    const stored = await readWorkflowHistory(bus, correlationId, { tenantId, since: options.since });
    for (const entry of stored) {
      const parsed = parseEnvelope(entry.envelope, { subject: entry.subject });
      if (!parsed.ok) continue;
      seen.add(parsed.value.message_id);
      if (entry.idempotency_key) seenKeys.add(entry.idempotency_key);
      noteDeadline(parsed.value);
      yield { kind: 'envelope', envelope: parsed.value };
      const view = await ended(parsed.value);
      if (view) return yield { kind: 'terminal', status: view.status, view };
    }
    while (!options.signal?.aborted) {
      const next = live.shift();
      if (!next) {
        if (Date.now() >= giveUpAt() && !claimPending()) {
          const view = await confirmEnded(bus, tenantId, correlationId, { attempts: 1, signal: options.signal });
          if (view) return yield { kind: 'terminal', status: view.status, view };
          // What arrived meanwhile (an announcement of the end, say) is looked at before giving up.
          if (live.length > 0) continue;
          if (options.signal?.aborted) return;
          const reason = `the hub has not confirmed how workflow ${correlationId} ended ${describeMs(options.giveUpAfterDeadlineMs!)} after its deadline (${deadline}); the hub may be down or cut off, and the workflow may still be recorded later`;
          return yield { kind: 'unconfirmed', deadline: deadline!, reason };
        }
        const timedOut = await new Promise<boolean>((resolve) => {
          const every = claimedAt !== null && Date.now() - claimedAt > CLAIM_RECHECK_MS ? RECHECK_SLOWLY_EVERY_MS : RECHECK_EVERY_MS;
          const untilGiveUp = giveUpAt() - Date.now();
          // Past the give-up time, only a pending claim's rechecks are waited for; otherwise go round at once.
          const wait = Math.min(claimedAt === null ? Infinity : every, untilGiveUp > 0 ? untilGiveUp : claimPending() ? Infinity : 0);
          const timer = Number.isFinite(wait) ? setTimeout(() => resolve(true), Math.min(Math.max(0, wait), MAX_TIMER_MS)) : undefined;
          wake = () => {
            clearTimeout(timer);
            resolve(false);
          };
        });
        wake = undefined;
        if (timedOut && claimedAt !== null) {
          const view = await ended(null);
          if (view) return yield { kind: 'terminal', status: view.status, view };
        }
        continue;
      }
      if (seen.has(next.envelope.message_id) || (next.key !== undefined && seenKeys.has(next.key))) continue;
      seen.add(next.envelope.message_id);
      if (next.key !== undefined) seenKeys.add(next.key);
      noteDeadline(next.envelope);
      yield { kind: 'envelope', envelope: next.envelope };
      const view = await ended(next.envelope);
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
 * The end the hub announced for a workflow, as the stream holds it: the last `status_update` on its
 * subject when that is the hub's and terminal (with the announcement's timestamp), else null. One
 * read of the stream's message-get API; it outlives the ledger's record of the workflow.
 */
export async function readAnnouncedEnd(bus: Bus, tenantId: string, correlationId: string): Promise<{ status: WorkflowStatus; at: string } | null> {
  const last = await bus.jsm.streams.getMessage(bus.options.workflowStream, { last_by_subj: workflowSubject(tenantId, 'status_update', correlationId) });
  const announced = last ? parseEnvelope(last.data, { subject: last.subject }) : null;
  const status = announced?.ok ? terminalStatusOf(announced.value) : null;
  return announced?.ok && status ? { status, at: announced.value.timestamp } : null;
}

/**
 * The hub's view of a workflow once its ledger shows it finished, asked up to `attempts` times, 4 ms
 * apart at first, doubling up to `intervalMs` (50 ms): the hub announces a status just before it
 * saves it; no more after `until` (epoch ms) but the first. Null if the ledger does not show that by
 * then, or the hub cannot be asked.
 */
export async function confirmEnded(
  bus: Bus,
  tenantId: string,
  correlationId: string,
  options: { attempts?: number; intervalMs?: number; signal?: AbortSignal; until?: number } = {},
): Promise<WorkflowView | null> {
  const attempts = options.attempts ?? 20;
  for (let i = 0; i < attempts && !options.signal?.aborted && (i === 0 || Date.now() < (options.until ?? Infinity)); i++) {
    // The save follows the announcement by a millisecond or two: ask again soon, then every intervalMs.
    if (i > 0) await new Promise((resolve) => setTimeout(resolve, Math.min(options.intervalMs ?? 50, 2 ** (i + 1))));
    try {
      const view = await askTogether(bus, tenantId, correlationId);
      if (isTerminalStatus(view.status)) return view;
    } catch {
      // Not known yet, or the hub is not answering: ask again, and in the end do not end the watch.
    }
  }
  return null;
}

/**
 * The hub's view of a workflow, one request shared by everyone in this process asking for it while
 * it is in flight ({@link Bus.shared}). Every watcher of a workflow asks when it sees the end
 * announced, up to twenty times: hundreds of event streams on one workflow sent the hub thousands of
 * identical reads at once. A joiner may get an answer from before the end was saved; like its own
 * first read, it then asks again.
 */
function askTogether(bus: Bus, tenantId: string, correlationId: string): Promise<WorkflowView> {
  const body = { correlation_id: correlationId, tenant_id: tenantId };
  return bus.shared(`${HubSubjects.Workflow}\u0000${tenantId}\u0000${correlationId}`, () =>
    requestReply<WorkflowView>(bus, HubSubjects.Workflow, body, bus.options.requestTimeoutMs, HUB_READ),
  );
}

/** `400 ms`, `60 s`, `1.5 s`. */
function describeMs(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Number((ms / 1000).toFixed(1))} s`;
}
