import type { StoredDeadLetter } from '@chorus/bus';
import type { HistoryReply, ListReply, WorkflowView } from '@chorus/envelope';
import { oneLine } from './terminal-text';

/** Human-readable renderings of the CLI's answers (what clients sent is shown on one line each: `oneLine`). */
export function renderWorkflow(w: WorkflowView): string {
  const lines: string[] = [];
  const took = w.finished_at ? ` in ${Date.parse(w.finished_at) - Date.parse(w.started_at)} ms` : '';
  lines.push(`status: ${w.status}${w.degraded ? ' (degraded)' : ''}${took}`);
  if (w.query !== null) lines.push(`query: ${oneLine(w.query)}`);
  if (w.retry_of) lines.push(`retry of: ${w.retry_of}`);
  if (w.retried_as) lines.push(`retried as: ${w.retried_as}`);
  for (const d of w.degradations) lines.push(`missing lens: ${d.profile} (${d.reason}): ${oneLine(d.detail)}`);
  for (const e of w.errors) lines.push(`error: ${e.agent}${e.step ? ` handling ${e.step}` : ''}: [${e.error_type}] ${oneLine(e.error_message)}`);
  if (w.duplicates_dropped > 0) lines.push(`duplicates dropped: ${w.duplicates_dropped}`);
  lines.push('steps:');
  for (const s of w.steps) lines.push(`  ${s.message_type.padEnd(22)} ${s.agent.padEnd(10)} ${s.status.padEnd(8)} ${String(s.duration_ms).padStart(5)} ms`);
  if (w.result) {
    lines.push('', `answer: ${oneLine(w.result.answer)}`, '', 'results:');
    for (const r of w.result.results) {
      const ranks = Object.entries(r.ranks)
        .map(([p, n]) => `${p} #${n}`)
        .join(', ');
      lines.push(`  ${String(r.rank).padStart(2)}. ${oneLine(r.title || r.id)}  [${ranks}]  rrf ${r.score.toFixed(4)}`);
      lines.push(`      ${r.id}`);
    }
    lines.push('', `profiles used: ${w.result.provenance.profiles_used.join(', ')}`);
  }
  return lines.join('\n');
}

export function renderHistory(h: HistoryReply): string {
  return h.envelopes
    .map((e) => {
      const env = (typeof e === 'object' && e !== null ? e : {}) as { timestamp?: string; message_type?: string; agent?: string; status?: string; message_id?: string; causation_id?: string | null };
      return oneLine(`${env.timestamp ?? '?'}  ${String(env.message_type).padEnd(22)} ${String(env.agent).padEnd(10)} ${String(env.status).padEnd(8)} ${env.message_id} <- ${env.causation_id ?? '-'}`);
    })
    .join('\n');
}

export function renderList(l: ListReply): string {
  if (l.workflows.length === 0) return 'no workflows';
  const rows = l.workflows.map((w) => `${w.correlation_id}  ${w.status.padEnd(9)} ${w.started_at}  ${oneLine((w.query ?? '').slice(0, 60))}`);
  if (l.next_cursor) rows.push(`(more: --cursor ${l.next_cursor})`);
  else if (l.complete === false) rows.push('(older workflows are not listed: the hub lists its most recent ones; `chorus status <id>` still finds them)');
  return rows.join('\n');
}

/** One dead letter per line, then what was wrong with it: its field errors, or the error its step gave up on. */
export function renderDeadLetters(letters: readonly StoredDeadLetter[]): string {
  if (letters.length === 0) return 'no dead letters';
  return letters
    .map((l) => {
      // Anyone allowed to publish on a dead-letter subject can store anything there: nothing read
      // back is taken for granted, so one odd message does not make the whole list unreadable.
      if ('unreadable' in l) return `?  ${l.dlq_subject}  (dead-letter stream seq ${l.dlq_seq})\n    ${oneLine(l.unreadable)}`;
      const reason = String(l.reason ?? '?');
      const deliveries = Number(l.deliveries);
      const head = `${l.dead_lettered_at ?? '?'}  ${reason.padEnd(16)}  ${l.subject ?? '?'}  (stream seq ${l.stream_seq ?? '?'}, ${Number.isFinite(deliveries) ? deliveries : '?'} ${deliveries === 1 ? 'delivery' : 'deliveries'})`;
      const error = typeof l.error === 'object' && l.error !== null ? l.error : null;
      const errors = Array.isArray(l.errors) ? l.errors : [];
      const why = error
        ? [`${error.error_type}: ${oneLine(String(error.error_message))}`]
        : errors.map((e) => oneLine(typeof e === 'object' && e !== null ? `${e.field}: ${Array.isArray(e.messages) ? e.messages.join('; ') : String(e.messages)}` : String(e)));
      return [head, ...why.slice(0, 5).map((w) => `    ${w}`), ...(why.length > 5 ? [`    (${why.length - 5} more)`] : [])].join('\n');
    })
    .join('\n');
}
