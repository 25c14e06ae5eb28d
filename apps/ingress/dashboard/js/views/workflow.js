import { trackWidth } from '../charts/svg.js';
import { drawTimeline } from '../charts/timeline-chart.js';
import { toQuery } from '../lib/api.js';
import { card, h, isTerminal, replace, shortId, workflowHref } from '../lib/dom.js';
import { createAuditTrail, markDuplicates } from './audit-trail.js';
import { renderMeta, renderProblems, renderResult, renderStepsTable, titleBadges } from './workflow-sections.js';

/**
 * `#/workflows/<id>[?tenant=t]`: one workflow. A finished one is read once (view + history). A
 * running one is followed over its SSE stream: steps draw as they happen, the step being worked on
 * grows live, and the `terminal` event brings the final record and the full history. Renders are
 * coalesced to one per animation frame, so a burst of events costs one redraw.
 */
export function mountWorkflow(outlet, { scope, params: [id], query, ctx }) {
  const { api } = ctx;
  const q = toQuery({ tenant_id: query.tenant });
  const base = `/v1/workflows/${encodeURIComponent(id)}`;
  const model = { view: null, status: 'pending', events: [], eventIds: new Set(), envelopes: null, streaming: false, terminalSeen: false, unconfirmed: '', gone: false };

  const title = h('h1', { tabindex: -1, class: 'wf-title' }, `Workflow ${shortId(id)}`);
  const badges = h('span', { class: 'title-badges', role: 'status' });
  const cancelBtn = h('button', { type: 'button', class: 'btn btn-danger', hidden: true }, 'Cancel workflow');
  const retryBtn = h('button', { type: 'button', class: 'btn', hidden: true, title: 'Run the same request again as a new workflow' }, 'Retry');
  const notice = h('p', { class: 'error-note', role: 'alert', hidden: true });
  const meta = h('dl', { class: 'meta' });
  outlet.append(h('a', { href: '#/', class: 'back' }, '← Workflows'), h('div', { class: 'page-head wf-head' }, h('div', {}, title, badges), cancelBtn, retryBtn), notice, meta);

  const liveNote = h('span', { class: 'live' }, h('span', { class: 'live-dot', 'aria-hidden': 'true' }), h('span', { 'data-role': 'live-text' }, ''));
  const [tlCard, tlBody] = card('Timeline', { id: 'timeline', actions: liveNote });
  const tlChart = h('div', { class: 'chart-box timeline-box' });
  const stepsBody = h('tbody');
  const head = ['#', 'Agent', 'Message type', 'Status', 'Attempt', 'Start', 'Duration', 'Message id'];
  tlBody.append(tlChart, h('div', { class: 'table-wrap' }, h('table', { class: 'table steps-table' }, h('thead', {}, h('tr', {}, head.map((c) => h('th', { scope: 'col' }, c)))), stepsBody)));
  const [probCard, probBody] = card('Errors and degraded lenses', { id: 'problems', cls: 'problems-card' });
  const [resCard, resBody] = card('Result', { id: 'result' });
  probCard.hidden = resCard.hidden = true;
  const auditCount = h('span', { class: 'muted small' });
  const refreshBtn = h('button', { type: 'button', class: 'btn btn-ghost' }, 'Refresh');
  const [auditCard, auditBody] = card('Audit trail', { id: 'audit', actions: [auditCount, refreshBtn] });
  const auditList = h('ol', { class: 'audit' });
  auditBody.append(auditList);
  const audit = createAuditTrail(auditList);
  outlet.append(tlCard, probCard, resCard, auditCard);

  let frame = 0;
  const scheduleRender = () => {
    if (!frame) frame = requestAnimationFrame(() => ((frame = 0), render()));
  };
  scope.onDispose(() => cancelAnimationFrame(frame));
  trackWidth(scope, tlChart, scheduleRender);

  const showNotice = (text, kind = '') => ((notice.textContent = text), (notice.hidden = !text), (notice.dataset.kind = kind));
  const applyView = (view) => {
    model.view = view;
    model.status = view.status;
    scheduleRender();
  };
  const onEvent = ({ event, data }) => {
    // The stream answers: a notice that loading failed (NATS was away) no longer holds. Others
    // (a cancel that failed) stay.
    if (event !== 'unconfirmed' && notice.dataset.kind === 'load') showNotice('');
    // A stream opened just after the submission says `pending` while the workflow may already run: never step back.
    if (event === 'status' && !isTerminal(model.status) && !(model.status === 'running' && data.workflow_status === 'pending')) model.status = data.workflow_status;
    else if (event === 'step' && !model.eventIds.has(data.message_id)) {
      model.eventIds.add(data.message_id);
      model.events.push(data);
    } else if (event === 'terminal') {
      model.terminalSeen = true;
      if (Array.isArray(data.steps)) applyView(data);
      else api.get(base + q, { signal: scope.signal }).then(applyView, () => {});
      loadHistory();
    } else if (event === 'unconfirmed') {
      // The hub has not confirmed an end well after the deadline: say so, then poll the workflow.
      model.unconfirmed = `${data.reason}. Checking the workflow every 2 s.`;
      showNotice(model.unconfirmed);
    }
    scheduleRender();
  };

  async function loadHistory() {
    try {
      const reply = await api.get(`${base}/history${q}`, { signal: scope.signal });
      model.envelopes = reply.envelopes;
      scheduleRender();
    } catch (err) {
      if (err.name !== 'AbortError') auditCount.textContent = `history unavailable: ${err.message}`;
    }
  }

  async function follow(attempt = 0) {
    const ended = scope.trackStream();
    model.streaming = true;
    scheduleRender();
    try {
      await api.stream(`${base}/events${q}`, { signal: scope.signal, onEvent });
      if (model.unconfirmed) return pollUntilDone();
      if (!model.terminalSeen) throw new Error('the event stream ended before the workflow did');
    } catch (err) {
      if (scope.disposed || err.name === 'AbortError') return;
      if (err.status === 404) return notFound();
      if (err.status === 400 || err.status === 403) return refused(err);
      if (attempt < 3) scope.timeout(() => follow(attempt + 1), 1000 * 2 ** attempt);
      else pollUntilDone();
    } finally {
      ended();
      model.streaming = false;
      scheduleRender();
    }
  }

  function pollUntilDone() {
    const poller = scope.poll(async (signal) => {
      applyView(await api.get(base + q, { signal }));
      // A poll that worked replaces a "Lost the workflow" notice; the unconfirmed reason stays until the end.
      showNotice(model.unconfirmed);
      if (isTerminal(model.view.status)) {
        poller.stop();
        showNotice('');
        loadHistory();
      }
    }, 2000, { onError: (err) => showNotice(model.unconfirmed ? `${model.unconfirmed} The last check failed (${err.message}); retrying.` : `Lost the workflow: ${err.message}; retrying.`) });
  }

  function notFound() {
    model.gone = true;
    ticker?.stop();
    outlet.replaceChildren(
      h('a', { href: '#/', class: 'back' }, '← Workflows'),
      h('div', { class: 'page-head' }, h('h1', { tabindex: -1 }, 'Workflow not found')),
      h('p', {}, 'No workflow ', h('code', {}, id), query.tenant ? ` in tenant ${query.tenant}` : '', '. It may have left the ledger (finished workflows are kept for a day), or belong to another tenant.'),
    );
  }

  /** An id (or tenant) the API refuses (400), or a tenant the key may not read (403): nothing to retry. */
  function refused(err) {
    model.gone = true;
    ticker?.stop();
    const forbidden = err.status === 403;
    outlet.replaceChildren(
      h('a', { href: '#/', class: 'back' }, '← Workflows'),
      h('div', { class: 'page-head' }, h('h1', { tabindex: -1 }, forbidden ? 'Not allowed' : 'Not a workflow id')),
      forbidden
        ? h('p', {}, 'Workflow ', h('code', {}, id), query.tenant ? ` (tenant ${query.tenant})` : '', ' cannot be read with this API key: ', err.message, '.')
        : h('p', {}, h('code', {}, id), query.tenant ? ` (tenant ${query.tenant})` : '', ' is not a valid workflow id: ', err.fieldErrors?.length ? err.fieldErrors.map((f) => `${f.field}: ${f.messages.join('; ')}`).join('; ') : err.message, '.'),
    );
  }

  // A live step bar grows with the clock; only while the workflow runs.
  let ticker = null;
  ticker = scope.poll(() => (isTerminal(model.view?.status ?? model.status) ? ticker?.stop() : scheduleRender()), 500);

  let disarm = null; // a second click within four seconds confirms
  cancelBtn.addEventListener('click', async () => {
    if (!disarm) {
      cancelBtn.textContent = 'Confirm cancel';
      disarm = scope.timeout(() => ((disarm = null), (cancelBtn.textContent = 'Cancel workflow')), 4000);
      return;
    }
    disarm();
    disarm = null;
    cancelBtn.disabled = true;
    try {
      await api.post(`${base}/cancel${q}`, { reason: 'cancelled from the dashboard' }, { signal: scope.signal });
      cancelBtn.textContent = 'Cancelling…';
      if (!model.streaming) pollUntilDone();
    } catch (err) {
      if (err.name === 'AbortError') return;
      showNotice(err.status === 409 ? 'The workflow had already finished.' : `Could not cancel: ${err.message}`);
      cancelBtn.disabled = false;
      cancelBtn.textContent = 'Cancel workflow';
    }
  });
  retryBtn.addEventListener('click', async () => {
    retryBtn.disabled = true;
    try {
      const started = await api.post(`${base}/retry${q}`, { reason: 'retried from the dashboard' }, { signal: scope.signal });
      location.hash = workflowHref(started.correlation_id, started.tenant_id);
    } catch (err) {
      if (err.name === 'AbortError') return;
      showNotice(`Could not retry: ${err.message}`);
      retryBtn.disabled = false;
    }
  });
  refreshBtn.addEventListener('click', loadHistory);

  function render() {
    if (model.gone) return;
    const w = model.view;
    const status = w && isTerminal(w.status) ? w.status : model.status;
    const terminal = isTerminal(status);
    if (w?.query) title.textContent = w.query;
    document.title = `${w?.query ?? shortId(id)} · Chorus`;
    const badgeSig = `${status}|${w?.degraded}`;
    if (badges.dataset.sig !== badgeSig) {
      badges.dataset.sig = badgeSig; // a live region: only touch it when the status changes
      replace(badges, titleBadges({ status, degraded: w?.degraded }));
    }
    cancelBtn.hidden = terminal || !w;
    // As the API decides: an end without a complete answer, not retried yet (its link is in the meta).
    retryBtn.hidden = !(terminal && w && isTerminal(w.status) && !w.retried_as && (w.status !== 'completed' || w.degraded));
    if (w) renderMeta(meta, { ...w, ...(terminal ? {} : liveFields(model.events)), status }, { now: Date.now() });
    liveNote.classList.toggle('is-live', model.streaming && !terminal);
    liveNote.hidden = terminal;
    liveNote.querySelector('[data-role=live-text]').textContent = model.streaming && !terminal ? 'live' : terminal ? '' : model.unconfirmed ? 'checking every 2 s' : 'connecting…';

    // History read while the workflow runs (the audit trail's Refresh) is a snapshot: the envelopes
    // streamed since follow it, so neither the trail nor the step being worked on goes stale.
    const read = model.envelopes ? new Set(model.envelopes.map((e) => e.message_id)) : null;
    const trail = model.envelopes ? [...model.envelopes, ...model.events.filter((e) => !read.has(e.message_id))] : model.events;

    const start = Date.parse(w?.started_at ?? model.events[0]?.timestamp ?? new Date().toISOString());
    const steps = terminal && w ? [...w.steps] : model.events.length ? stepsFromEvents(model.events) : [...(w?.steps ?? [])];
    const finishedAt = terminal && w?.finished_at ? Date.parse(w.finished_at) : null;
    const pending = pendingStep(terminal ? w : null, trail, steps);
    if (pending) steps.push(pending);
    // A command applied after the end (a retry asked for an hour later) is in the table, not the chart.
    const charted = finishedAt ? steps.filter((st) => st.live || st.message_type !== 'orchestration_command' || Date.parse(st.finished_at) <= finishedAt) : steps;
    const lastEnd = Math.max(start, ...charted.filter((st) => !st.live).map((st) => Date.parse(st.finished_at)));
    const end = finishedAt ? Math.max(finishedAt, lastEnd) : Date.now();
    drawTimeline(tlChart, { steps: charted, start, end, finishedAt, status, deadline: w ? Date.parse(w.deadline) : null });
    renderStepsTable(stepsBody, steps, start);
    if (w) {
      renderProblems(probCard, probBody, w);
      renderResult(resCard, resBody, w);
    }

    const entries = read ? markDuplicates(trail).map((e) => ({ ...e, full: read.has(e.message_id) })) : model.events;
    audit.render(entries);
    const dups = entries.filter((e) => e.duplicate).length;
    const streamed = !read || entries.some((e) => !e.full);
    auditCount.textContent = `${entries.length} envelope${entries.length === 1 ? '' : 's'}${dups ? `, ${dups} duplicate` : ''}${streamed ? ' (live)' : ''}`;
  }

  (async () => {
    try {
      applyView(await api.get(base + q, { signal: scope.signal }));
    } catch (err) {
      if (err.name === 'AbortError') return;
      if (err.status === 400 || err.status === 403) return refused(err);
      if (err.status !== 404) showNotice(`Could not load the workflow: ${err.message}`, 'load');
    }
    if (model.view && isTerminal(model.view.status)) loadHistory();
    else follow();
  })();
}

/** While a workflow runs, the record fetched on arrival ages: the streamed envelopes are fresher. */
function liveFields(events) {
  const agents = [...new Set(events.filter((e) => e.agent !== 'hub').map((e) => e.agent))];
  const last = events.filter((e) => e.agent !== 'hub').at(-1);
  return agents.length ? { agents_involved: agents, next_steps: last?.next_steps ?? [] } : {};
}

/** Steps from streamed envelopes, as the hub computes them: input timestamp → output timestamp. */
function stepsFromEvents(events) {
  const stamps = new Map(events.map((e) => [e.message_id, e.timestamp]));
  return events
    .filter((e) => e.agent !== 'hub')
    .map((e) => {
      const started = (e.causation_id && stamps.get(e.causation_id)) || e.timestamp;
      return { agent: e.agent, message_type: e.message_type, status: e.status, message_id: e.message_id, started_at: started, finished_at: e.timestamp, duration_ms: Date.parse(e.timestamp) - Date.parse(started), attempt: e.attempt };
    });
}

/**
 * The step nobody has finished: while running, the next agent's bar grows from the last envelope;
 * on a workflow that timed out or was cancelled, it shows whose answer never came (the hub clears
 * `next_steps` when a workflow finishes, so the envelopes tell).
 */
function pendingStep(finished, envelopes, steps) {
  const last = steps.at(-1);
  const lastEnvelope = [...envelopes].reverse().find((e) => e.agent !== 'hub' && e.message_type !== 'orchestration_command');
  const next = lastEnvelope?.next_steps?.[0];
  if (!next || !last || lastEnvelope.status === 'error') return null;
  if (!finished) return { agent: next, started_at: lastEnvelope.timestamp, live: true, message_type: null };
  if (!['timed_out', 'cancelled'].includes(finished.status)) return null;
  return { agent: next, started_at: lastEnvelope.timestamp, live: true, cls: 'bar-abandoned', label: `no answer (${finished.status.replace('_', ' ')})` };
}
