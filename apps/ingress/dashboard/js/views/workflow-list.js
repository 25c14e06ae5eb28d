import { toQuery } from '../lib/api.js';
import { agentChip, card, durationOf, fmtDateTime, fmtMs, h, isTerminal, replace, shortId, statusBadge, syncKeyed, workflowHref } from '../lib/dom.js';
import { replaceQuery } from '../lib/router.js';

const STATUSES = ['pending', 'running', 'completed', 'failed', 'timed_out', 'cancelled'];
// The agents a workflow's steps usually name: the edges (HTTP, CLI), the hub (it submits a retry's
// query) and the agents. Any other (a client of its own) is filtered on through the URL.
const AGENTS = ['ingress', 'cli', 'hub', 'intent', 'planner', 'search', 'responder'];
const LIMITS = [25, 50, 100, 200];
const POLL_MS = 2000;

/**
 * The workflow list. Live mode polls the newest page (`limit` rows) every two seconds and patches
 * only the rows that changed; "Older" switches to browsing pages by cursor, which stops the poll
 * until "Newest" brings it back. Filters live in the URL, so a filtered view can be shared.
 */
export function mountWorkflowList(parent, { api, scope, query, onRows }) {
  // The URL's filters go to the API as they are, so one it refuses (a hand-edited status, limit or
  // since) is shown with the field it names instead of being dropped without a word.
  const filters = {
    status: query.status ?? '',
    agent: query.agent ?? '',
    since: query.since ?? '',
    until: query.until ?? '',
    tenant_id: query.tenant_id ?? '',
    limit: query.limit || '50',
  };
  let cursor = null; // null: the newest page, live
  let generation = 0; // bumped when filters or page change, so an answer to an older request is dropped
  let nextCursor = null;
  let paused = false;
  let rendered = false;

  const liveDot = h('span', { class: 'live-dot', 'aria-hidden': 'true' });
  const liveText = h('span', {}, 'connecting…');
  const pauseBtn = h('button', { type: 'button', class: 'btn btn-ghost', 'aria-pressed': 'false' }, 'Pause');
  const [section, body] = card('Workflows', { id: 'workflows', actions: [h('span', { class: 'live' }, liveDot, liveText), pauseBtn] });

  const field = (label, control) => h('label', { class: 'field' }, h('span', {}, label), control);
  // A value from the URL that is not among the options is added, so the field shows what is applied.
  const select = (name, options, value, empty) => {
    const all = value === '' || options.map(String).includes(String(value)) ? options : [...options, value];
    return h('select', { name }, empty ? h('option', { value: '' }, empty) : null, all.map((o) => h('option', { value: String(o), selected: String(o) === String(value) }, String(o).replace('_', ' '))));
  };
  // A date the browser cannot read (from a hand-edited URL) leaves the field empty; the API names it.
  const toLocal = (iso) => {
    const t = iso ? Date.parse(iso) : NaN;
    // The offset of that date, not today's: across a DST change they differ by an hour.
    return Number.isFinite(t) ? new Date(t - new Date(t).getTimezoneOffset() * 60_000).toISOString().slice(0, 19) : '';
  };
  const form = h(
    'form',
    { class: 'filters', 'aria-label': 'Filter workflows' },
    field('Status', select('status', STATUSES, filters.status, 'any')),
    field('Agent', select('agent', AGENTS, filters.agent, 'any')),
    field('Since', h('input', { type: 'datetime-local', name: 'since', step: 1, value: toLocal(filters.since) })),
    field('Until', h('input', { type: 'datetime-local', name: 'until', step: 1, value: toLocal(filters.until) })),
    field('Tenant', h('input', { type: 'text', name: 'tenant_id', placeholder: 'all', size: 8, value: filters.tenant_id, spellcheck: 'false' })),
    field('Rows', select('limit', LIMITS, filters.limit)),
    h('button', { type: 'reset', class: 'btn btn-ghost' }, 'Clear'),
  );
  const error = h('p', { class: 'error-note', role: 'alert', hidden: true });
  const tbody = h('tbody');
  const empty = h('p', { class: 'empty', hidden: true }, 'No workflows match.');
  const table = h(
    'table',
    { class: 'table workflows-table' },
    h('thead', {}, h('tr', {}, ['Status', 'Query', 'Agents', 'Tenant', 'Started', 'Duration', 'Flags'].map((c) => h('th', { scope: 'col', class: c === 'Duration' || c === 'Started' ? 'num' : '' }, c)))),
    tbody,
  );
  const newestBtn = h('button', { type: 'button', class: 'btn btn-ghost', disabled: true }, '⟲ Newest');
  const olderBtn = h('button', { type: 'button', class: 'btn btn-ghost', disabled: true }, 'Older →');
  body.append(form, error, h('div', { class: 'table-wrap' }, table), empty, h('nav', { class: 'pager', 'aria-label': 'Pages' }, newestBtn, olderBtn));
  parent.append(section);

  tbody.addEventListener('click', (event) => {
    if (event.target.closest('a')) return;
    const row = event.target.closest('tr[data-href]');
    if (row) location.hash = row.dataset.href;
  });

  const load = async (signal) => {
    const asked = generation;
    const reply = await api.get(`/v1/workflows${toQuery({ ...filters, cursor })}`, { signal });
    if (asked !== generation) return;
    error.hidden = true;
    nextCursor = reply.next_cursor;
    render(reply.workflows);
    olderBtn.disabled = !nextCursor;
    newestBtn.disabled = cursor === null;
    liveText.textContent = cursor !== null ? 'browsing older pages' : paused ? 'paused' : `live · ${fmtDateTime(new Date().toISOString())}`;
    section.classList.toggle('is-live', cursor === null && !paused);
  };
  const poller = scope.poll(load, POLL_MS, {
    onError: (err) => {
      const fields = err.fieldErrors?.length ? ` (${err.fieldErrors.map((f) => `${f.field}: ${f.messages.join('; ')}`).join('; ')})` : '';
      error.textContent = `Could not load workflows: ${err.message}${fields}`;
      error.hidden = false;
      section.classList.remove('is-live');
      // A filter the API refuses (or a tenant the key may not read) stays refused: stop until the filters change.
      if (err.status === 400 || err.status === 403) {
        poller.stop();
        liveText.textContent = 'stopped: fix the filters';
      } else liveText.textContent = 'retrying…';
    },
  });
  const refresh = () => {
    generation++;
    if (cursor === null && !paused) {
      if (poller.stopped) poller.resume();
      else poller.now();
    } else {
      poller.stop();
      load(scope.signal).catch((err) => err.name !== 'AbortError' && ((error.textContent = err.message), (error.hidden = false)));
    }
  };

  const readFilters = () => {
    const data = new FormData(form);
    filters.status = data.get('status');
    filters.agent = data.get('agent');
    filters.since = data.get('since') ? new Date(data.get('since')).toISOString() : '';
    filters.until = data.get('until') ? new Date(data.get('until')).toISOString() : '';
    filters.tenant_id = data.get('tenant_id').trim(); // as typed: the API names a tenant it refuses
    filters.limit = data.get('limit');
    replaceQuery({ ...filters, limit: filters.limit === '50' ? '' : filters.limit });
    cursor = null;
    rendered = false;
    refresh();
  };
  form.addEventListener('change', readFilters);
  form.addEventListener('submit', (e) => (e.preventDefault(), readFilters()));
  // After the form has reset its fields (to what the page opened with), back to the default rows.
  form.addEventListener('reset', () => scope.timeout(() => ((form.elements.limit.value = '50'), readFilters()), 0));
  pauseBtn.addEventListener('click', () => {
    paused = !paused;
    pauseBtn.textContent = paused ? 'Resume' : 'Pause';
    pauseBtn.setAttribute('aria-pressed', String(paused));
    refresh();
  });
  olderBtn.addEventListener('click', () => {
    cursor = nextCursor;
    refresh();
  });
  newestBtn.addEventListener('click', () => {
    cursor = null;
    refresh();
  });

  function render(workflows) {
    syncKeyed(tbody, workflows, {
      key: (w) => w.correlation_id,
      signature: (w) => `${w.status}|${w.finished_at}|${w.degraded}|${w.duplicates_dropped}|${w.agents_involved.length}|${w.query}`,
      create: () => h('tr'),
      fill: fillRow,
      onNew: rendered ? (tr) => tr.classList.add('row-new') : undefined,
    });
    rendered = true;
    empty.hidden = workflows.length > 0;
    onRows?.(workflows);
  }

  return { refresh: () => refresh() };
}

function fillRow(tr, w) {
  const href = workflowHref(w.correlation_id, w.tenant_id);
  tr.dataset.href = href;
  tr.dataset.status = w.status;
  const duration = durationOf(w);
  replace(
    tr,
    h('td', {}, statusBadge(w.status)),
    h('td', { class: 'query-cell' }, h('a', { href, class: 'wf-link' }, w.query ?? '(query not seen yet)'), h('div', { class: 'mono muted small', title: w.correlation_id }, shortId(w.correlation_id))),
    h('td', {}, h('div', { class: 'chips' }, w.agents_involved.map(agentChip))),
    h('td', { class: 'muted' }, w.tenant_id),
    h('td', { class: 'num' }, fmtDateTime(w.started_at)),
    h('td', { class: 'num' }, isTerminal(w.status) ? fmtMs(duration) : h('span', { class: 'running-note' }, 'in progress')),
    h(
      'td',
      { class: 'flags' },
      w.degraded ? h('span', { class: 'badge badge-warn', title: 'completed without every planned lens' }, 'degraded') : null,
      w.duplicates_dropped > 0 ? h('span', { class: 'badge badge-muted', title: 'duplicates dropped' }, `${w.duplicates_dropped} dup`) : null,
    ),
  );
}
