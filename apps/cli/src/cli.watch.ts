import { watchWorkflow, type Bus, type ChorusClient } from '@chorus/bus';
import { ChorusError, type Envelope, type WorkflowView } from '@chorus/envelope';
import { CliErrorTypes } from './cli.failure';
import { renderWorkflow } from './cli.render';
import { oneLine } from './terminal-text';

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/** The hub has not confirmed the end of the watched workflow in time: down, cut off or behind (exit 3). */
export class EndNotConfirmedError extends ChorusError {
  readonly code = CliErrorTypes.EndNotConfirmed;
  constructor(reason: string) {
    super(reason, { retryable: true });
  }
}

export interface WatchIo {
  stdout: (line: string) => void;
  /** Rewrites the live status line (a terminal); absent when the output is not a terminal. */
  live?: (text: string) => void;
}

/**
 * Follows a workflow: one line per step as it happens (time since the query, message type, agent,
 * status and what the step decided), a live status line on a terminal, then the finished workflow.
 * Throws, with the reason, when the hub has not confirmed an end `graceMs` after the deadline.
 */
export async function watch(bus: Bus, client: ChorusClient, view: WorkflowView, io: WatchIo, json: boolean, graceMs: number): Promise<WorkflowView | null> {
  const started = Date.parse(view.started_at);
  let frame = 0;
  let status = view.status;
  const ticker = io.live
    ? setInterval(() => io.live!(`${SPINNER[frame++ % SPINNER.length]} ${status} ${((Date.now() - started) / 1000).toFixed(1)} s`), 100)
    : undefined;
  try {
    for await (const event of watchWorkflow(bus, view.tenant_id, view.correlation_id, { since: new Date(started - 60_000), giveUpAfterDeadlineMs: graceMs, deadline: view.deadline })) {
      if (event.kind === 'terminal') break;
      // The hub is down or cut off: like any other unreachable Chorus, an error (exit code 3).
      if (event.kind === 'unconfirmed') throw new EndNotConfirmedError(event.reason);
      const e = event.envelope;
      if (e.agent !== 'hub' && e.message_type !== 'query') status = 'running';
      io.live?.('');
      io.stdout(json ? JSON.stringify(e) : describe(e, started));
    }
  } finally {
    if (ticker) clearInterval(ticker);
    io.live?.('');
  }
  const finished = await client.settled(view.correlation_id, view.tenant_id);
  if (finished) io.stdout(json ? JSON.stringify(finished) : `\n${renderWorkflow(finished)}`);
  return finished;
}

function describe(e: Envelope, started: number): string {
  const at = `+${Math.max(0, Date.parse(e.timestamp) - started)} ms`.padEnd(10);
  const what = oneLine(detail(e));
  return `  ${at} ${e.message_type.padEnd(22)} ${e.agent.padEnd(10)} ${e.status.padEnd(8)}${what ? ` ${what}` : ''}`;
}

/** The one thing worth knowing about a step, from its payload. */
function detail(e: Envelope): string {
  const p = e.payload as Record<string, any>;
  if (e.error_details) return `[${e.error_details.error_type}] ${e.error_details.error_message}`;
  switch (e.message_type) {
    case 'classification_result':
      return `${p.intent}, ${p.modality}, ${p.complexity}, confidence ${p.confidence}`;
    case 'execution_plan':
      return `${p.route}: ${(p.profiles ?? []).map((x: { name: string }) => x.name).join(', ')}`;
    case 'tool_results':
      return `${(p.results ?? []).length} results from ${(p.profiles_used ?? []).join(', ')}${(p.degraded ?? []).length ? `; missing ${(p.degraded as Array<{ profile: string; reason: string }>).map((d) => `${d.profile} (${d.reason})`).join(', ')}` : ''}`;
    case 'status_update':
      return `${p.workflow_status}${p.reason ? `: ${p.reason}` : ''}`;
    case 'orchestration_command':
      return `${p.command}${p.reason ? `: ${p.reason}` : ''}`;
    default:
      return '';
  }
}
