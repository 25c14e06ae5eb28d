import { agentChip, durationOf, fmtDateTime, fmtMs, h, replace, shortId, statusBadge, workflowHref } from '../lib/dom.js';

/** The definition list under a workflow's title. */
export function renderMeta(dl, w, { now = Date.now() } = {}) {
  const item = (term, ...value) => h('div', { class: 'meta-item' }, h('dt', {}, term), h('dd', {}, ...value));
  const running = !w.finished_at;
  replace(
    dl,
    item('Correlation id', h('code', { class: 'mono' }, w.correlation_id)),
    item('Tenant', w.tenant_id),
    item('Started', fmtDateTime(w.started_at)),
    item('Finished', running ? '—' : fmtDateTime(w.finished_at)),
    item('Duration', running ? `${fmtMs(now - Date.parse(w.started_at))} so far` : fmtMs(durationOf(w))),
    item('Deadline', fmtDateTime(w.deadline)),
    item('Agents', h('span', { class: 'chips' }, w.agents_involved.map(agentChip))),
    item('Duplicates dropped', h('span', { 'data-field': 'duplicates_dropped' }, String(w.duplicates_dropped))),
    item('Late envelopes', String(w.late_envelopes ?? 0)),
    running && w.next_steps?.length ? item('Next', h('span', { class: 'chips' }, w.next_steps.map(agentChip))) : null,
    w.retry_of ? item('Retry of', h('a', { href: workflowHref(w.retry_of, w.tenant_id), class: 'mono', 'data-field': 'retry_of' }, shortId(w.retry_of))) : null,
    w.retried_as ? item('Retried as', h('a', { href: workflowHref(w.retried_as, w.tenant_id), class: 'mono', 'data-field': 'retried_as' }, shortId(w.retried_as))) : null,
  );
}

/** One row per step: agent, message type, status, attempt, offset from the start, duration. */
export function renderStepsTable(tbody, steps, start) {
  tbody.replaceChildren(
    ...steps
      .filter((st) => !st.live)
      .map((st, i) =>
        h(
          'tr',
          { 'data-agent': st.agent },
          h('td', { class: 'num muted' }, String(i + 1)),
          h('td', {}, agentChip(st.agent)),
          h('td', { class: 'mono' }, st.message_type),
          h('td', {}, h('span', { class: `badge env-${st.status}` }, st.status)),
          h('td', { class: 'num' }, String(st.attempt)),
          h('td', { class: 'num' }, `+${fmtMs(Date.parse(st.started_at) - start)}`),
          h('td', { class: 'num' }, h('b', {}, fmtMs(st.duration_ms))),
          h('td', { class: 'mono muted small', title: st.message_id }, shortId(st.message_id)),
        ),
      ),
  );
}

/** Errors and degraded lenses; hidden when there are none. */
export function renderProblems(section, body, w) {
  const errors = w.errors ?? [];
  const degradations = w.degradations ?? [];
  section.hidden = errors.length === 0 && degradations.length === 0;
  replace(
    body,
    errors.length
      ? h(
          'table',
          { class: 'table errors-table' },
          h('caption', {}, `${errors.length} error${errors.length > 1 ? 's' : ''}`),
          h('thead', {}, h('tr', {}, ['Agent', 'Step', 'Error', 'Message', 'Retryable', 'At'].map((c) => h('th', { scope: 'col' }, c)))),
          h(
            'tbody',
            {},
            errors.map((e) =>
              h('tr', {}, h('td', {}, agentChip(e.agent)), h('td', { class: 'mono' }, e.step ?? '—'), h('td', {}, h('code', { class: 'error-type' }, e.error_type)), h('td', {}, e.error_message), h('td', {}, e.retry_possible ? 'yes' : 'no'), h('td', { class: 'num' }, fmtDateTime(e.at))),
            ),
          ),
        )
      : null,
    degradations.length
      ? h(
          'div',
          { class: 'degradations' },
          h('h3', {}, 'Degraded lenses'),
          h('ul', {}, degradations.map((d) => h('li', {}, h('span', { class: 'badge badge-warn' }, d.profile), ` ${d.reason}`, d.detail ? h('span', { class: 'muted' }, ` — ${d.detail}`) : null))),
        )
      : null,
  );
}

/** The answer, the fused results with each profile's rank, and the provenance. */
export function renderResult(section, body, w) {
  const r = w.result;
  section.hidden = !r;
  if (!r) return;
  const profiles = r.provenance?.profiles_used ?? [...new Set(r.results.flatMap((x) => Object.keys(x.ranks ?? {})))];
  const fusion = r.provenance?.fusion;
  replace(
    body,
    h('p', { class: 'answer' }, r.answer || h('span', { class: 'muted' }, 'No answer.')),
    r.results.length
      ? h(
          'div',
          { class: 'table-wrap' },
          h(
            'table',
            { class: 'table results-table' },
            h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, '#'), h('th', { scope: 'col' }, 'Result'), h('th', { scope: 'col' }, 'Score'), profiles.map((p) => h('th', { scope: 'col', class: 'num' }, p)))),
            h(
              'tbody',
              {},
              r.results.map((x) =>
                h(
                  'tr',
                  {},
                  h('td', { class: 'num' }, String(x.rank)),
                  h('td', {}, h('div', { class: 'result-title' }, x.title), h('div', { class: 'muted small' }, x.snippet), h('div', { class: 'mono muted small' }, x.id)),
                  h('td', { class: 'num' }, x.score.toFixed(4)),
                  profiles.map((p) => h('td', { class: 'num' }, x.ranks?.[p] ?? '—')),
                ),
              ),
            ),
          ),
        )
      : h('p', { class: 'muted' }, 'No results.'),
    h(
      'p',
      { class: 'muted small provenance' },
      `Method ${r.provenance?.method ?? '—'} · profiles ${profiles.join(', ') || '—'}`,
      fusion ? ` · RRF k=${fusion.k}, window ${fusion.rank_window}${fusion.weights ? `, weights ${JSON.stringify(fusion.weights)}` : ''}` : '',
      r.provenance?.degraded?.length ? ` · degraded: ${r.provenance.degraded.map((d) => d.profile).join(', ')}` : '',
    ),
  );
}

export function titleBadges(w) {
  return [statusBadge(w.status), w.degraded ? h('span', { class: 'badge badge-warn' }, 'degraded') : null];
}
