import { drawLatencyBars } from '../charts/bar-chart.js';
import { trackWidth } from '../charts/svg.js';
import { agentChip, card, fmtCount, fmtMs, fmtPercent, h, replace, syncKeyed } from '../lib/dom.js';

const POLL_MS = 3000;

/** `#/agents`: agents (instances, health, backlog, p50/p99, error rate) and search profiles. */
export function mountAgents(outlet, { scope, ctx }) {
  const { api } = ctx;
  const windowNote = h('p', { class: 'muted' }, 'Agents and search profiles that answer discovery now.');
  outlet.append(h('div', { class: 'page-head' }, h('h1', { tabindex: -1 }, 'Agents'), windowNote));
  const error = h('p', { class: 'error-note', role: 'alert', hidden: true });
  const statsNote = h('p', { class: 'error-note', role: 'status', hidden: true, 'data-role': 'stats-unavailable' });
  // What an agent that answers but does no work says of itself (the hub with no active replica).
  const warningsNote = h('ul', { class: 'error-note', role: 'status', hidden: true, 'data-role': 'agent-warnings' });
  outlet.append(error, warningsNote, statsNote);

  const [agentsCard, agentsBody] = card('Agents', { id: 'agents' });
  const agentRows = h('tbody');
  const cols = ['Agent', 'Health', 'Instances', 'Steps', 'Error rate', 'p50', 'p99', 'Backlog', 'In flight', 'Redelivered'];
  agentsBody.append(h('div', { class: 'table-wrap' }, h('table', { class: 'table agents-table' }, h('thead', {}, h('tr', {}, cols.map((c, i) => h('th', { scope: 'col', class: i > 1 ? 'num' : '' }, c)))), agentRows)));

  const [latCard, latBody] = card('Step latency per agent', { id: 'agent-latency', cls: 'chart-card' });
  const latChart = h('div', { class: 'chart-box' });
  latBody.append(latChart);

  const [profCard, profBody] = card('Search profiles', { id: 'profiles' });
  const profRows = h('tbody');
  const pcols = ['Profile', 'Health', 'Instances', 'Requests', 'Errors', 'Average', 'Description'];
  profBody.append(h('div', { class: 'table-wrap' }, h('table', { class: 'table profiles-table' }, h('thead', {}, h('tr', {}, pcols.map((c, i) => h('th', { scope: 'col', class: i > 1 && i < 6 ? 'num' : '' }, c)))), profRows)));
  const profEmpty = h('p', { class: 'empty', hidden: true }, 'No search profile answers discovery.');
  profBody.append(profEmpty);
  outlet.append(agentsCard, latCard, profCard);

  let last = null;
  const drawChart = () => {
    if (!last) return;
    const rows = last.agents.map((a) => ({ name: a.name, p50: a.window?.p50_ms ?? null, p99: a.window?.p99_ms ?? null }));
    drawLatencyBars(latChart, { rows, label: 'p50 and p99 step duration per agent', empty: last.window_error ? 'statistics unavailable' : 'no steps in the window' });
  };
  trackWidth(scope, latChart, drawChart);

  scope.poll(
    async (signal) => {
      const reply = await api.get('/v1/agents', { signal });
      last = reply;
      error.hidden = true;
      if (reply.window_ms) windowNote.textContent = `Agents and search profiles that answer discovery now; step statistics over the last ${Math.round(reply.window_ms / 60_000)} minutes.`;
      // Missing statistics are not "no steps": say why they are missing.
      statsNote.textContent = reply.window_error ?? '';
      statsNote.hidden = !reply.window_error;
      const warnings = reply.agents.flatMap((a) => (a.warnings ?? []).map((w) => `${a.name}: ${w}`));
      replace(warningsNote, ...warnings.map((w) => h('li', {}, w)));
      warningsNote.hidden = warnings.length === 0;
      syncKeyed(agentRows, reply.agents, { key: (a) => a.name, signature: (a) => JSON.stringify(a), create: () => h('tr'), fill: fillAgent });
      syncKeyed(profRows, reply.profiles, { key: (p) => p.name, signature: (p) => JSON.stringify(p), create: () => h('tr'), fill: fillProfile });
      profEmpty.hidden = reply.profiles.length > 0;
      drawChart();
    },
    POLL_MS,
    { onError: (err) => ((error.textContent = `Could not load agents: ${err.message}`), (error.hidden = false)) },
  );
}

const health = (status, instances) => h('span', { class: `health health-${status}` }, h('i', { 'aria-hidden': 'true' }), status === 'up' ? 'up' : instances === 0 ? 'down' : status);
const num = (v) => h('td', { class: 'num' }, v);

function fillAgent(tr, a) {
  tr.dataset.agent = a.name;
  const sum = (k) => a.consumers.reduce((s, c) => s + c[k], 0);
  const w = a.window;
  const consumers = a.consumers.map((c) => `${c.name}: ${c.pending} pending, ${c.in_flight} in flight, ${c.redelivered} redelivered, ${c.waiting_pulls} waiting pulls`).join('\n');
  tr.classList.toggle('is-down', a.health !== 'up');
  replace(
    tr,
    h('th', { scope: 'row' }, agentChip(a.name)),
    h('td', { title: (a.warnings ?? []).join('\n') }, health(a.health, a.instances)),
    num(String(a.instances)),
    num(w ? fmtCount(w.count) : '—'),
    h('td', { class: `num ${w?.error_rate > 0 ? 'text-bad' : ''}` }, w ? fmtPercent(w.error_rate) : '—'),
    num(fmtMs(w?.p50_ms)),
    num(fmtMs(w?.p99_ms)),
    h('td', { class: 'num', title: consumers }, a.consumers.length ? String(sum('pending')) : '—'),
    num(a.consumers.length ? String(sum('in_flight')) : '—'),
    num(a.consumers.length ? String(sum('redelivered')) : '—'),
  );
}

function fillProfile(tr, p) {
  tr.dataset.profile = p.name;
  const meta = Object.entries(p.metadata ?? {}).map(([k, v]) => h('span', { class: 'chip' }, `${k}: ${v}`));
  replace(
    tr,
    h('th', { scope: 'row' }, h('code', {}, p.name)),
    h('td', {}, health(p.health, p.instances)),
    num(String(p.instances)),
    num(fmtCount(p.requests)),
    h('td', { class: `num ${p.errors > 0 ? 'text-bad' : ''}` }, String(p.errors)),
    num(fmtMs(p.average_ms)),
    h('td', {}, p.description, meta.length ? h('div', { class: 'chips' }, meta) : null),
  );
}
