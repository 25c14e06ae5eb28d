import { drawLineChart } from '../charts/line-chart.js';
import { drawScatterChart } from '../charts/scatter-chart.js';
import { trackWidth } from '../charts/svg.js';
import { card, durationOf, fmtCount, h, shortId } from '../lib/dom.js';
import { ratesOf } from '../lib/stats-sampler.js';
import { mountSubmitForm } from './submit-form.js';
import { mountWorkflowList } from './workflow-list.js';

const KPIS = [
  ['active', 'Active', ''],
  ['completed', 'Completed', 'ok'],
  ['failed', 'Failed', 'bad'],
  ['timed_out', 'Timed out', 'warn'],
  ['cancelled', 'Cancelled', 'muted'],
  ['duplicates_dropped', 'Duplicates dropped', 'muted'],
  ['late_envelopes', 'Late envelopes', 'muted'],
  ['dead_letters', 'Dead letters', 'bad'],
];
const MAX_WINDOW_MS = 5 * 60_000;
const MIN_WINDOW_MS = 60_000;

/** `#/`: totals, throughput and latency charts, the submit box and the live workflow list. */
export function mountOverview(outlet, { scope, query, ctx }) {
  const { api, sampler } = ctx;
  outlet.append(h('div', { class: 'page-head' }, h('h1', { tabindex: -1 }, 'Workflows'), h('p', { class: 'muted' }, 'Every workflow the correlation hub has on its ledger, newest first.')));

  const kpiValues = new Map();
  const kpis = h(
    'section',
    { class: 'kpis', 'aria-label': 'Totals' },
    KPIS.map(([key, label, tone]) => {
      const value = h('span', { class: 'kpi-value' }, '—');
      kpiValues.set(key, value);
      return h('div', { class: `kpi kpi-${tone}`, 'data-kpi': key }, value, h('span', { class: 'kpi-label' }, label));
    }),
  );
  const totalsSince = h('p', { class: 'muted small totals-since' });
  outlet.append(kpis, totalsSince);

  const [tpCard, tpBody] = card('Throughput', { id: 'throughput', cls: 'chart-card' });
  const tpLegend = h('div', { class: 'legend' });
  const tpChart = h('div', { class: 'chart-box' });
  tpBody.append(tpLegend, tpChart);
  const [latCard, latBody] = card('End-to-end latency', { id: 'latency', cls: 'chart-card' });
  const latNote = h('p', { class: 'muted small' }, 'Finished workflows in the list below, start to finish.');
  const latChart = h('div', { class: 'chart-box' });
  latBody.append(latNote, latChart);
  outlet.append(h('div', { class: 'grid-2' }, tpCard, latCard));

  mountSubmitForm(outlet, { api, scope, onSubmitted: () => list.refresh() });
  let rows = [];
  const list = mountWorkflowList(outlet, { api, scope, query, onRows: (r) => ((rows = r), drawLatency()) });

  const series = [
    { key: ['created'], name: 'started', cls: 's-started' },
    { key: ['completed'], name: 'completed', cls: 's-completed', area: true },
    { key: ['failed', 'timed_out', 'cancelled'], name: 'failed / timed out / cancelled', cls: 's-failed' },
  ];
  function drawThroughput() {
    const latest = sampler.latest;
    if (latest) {
      for (const [key, el] of kpiValues) el.textContent = fmtCount(latest.totals[key]);
      totalsSince.textContent = latest.totals_since ? `Totals since ${new Date(latest.totals_since).toLocaleString()}.` : '';
    }
    const data = series.map((se) => ({ ...se, points: ratesOf(sampler.samples, se.key, sampler.intervalMs) }));
    tpLegend.replaceChildren(
      ...data.map((se) => {
        const avg = se.points.at(-1)?.v ?? null;
        return h('span', { class: `legend-item ${se.cls}` }, h('i', { 'aria-hidden': 'true' }), `${se.name} `, h('b', {}, avg === null ? '—' : `${avg.toFixed(avg < 10 ? 1 : 0)}/s`));
      }),
    );
    // The window grows with the samples (from one to five minutes), so a fresh tab is not mostly empty.
    const first = sampler.samples[0]?.t ?? Date.now();
    const windowMs = Math.min(MAX_WINDOW_MS, Math.max(MIN_WINDOW_MS, Math.ceil((Date.now() - first) / 60_000) * 60_000));
    drawLineChart(tpChart, { series: data, windowMs, label: `Workflows per second over the last ${windowMs / 60_000} minutes`, formatY: (v) => `${v}/s` });
  }
  function drawLatency() {
    const points = rows
      .filter((w) => w.finished_at)
      .map((w) => ({ t: Date.parse(w.finished_at), v: durationOf(w), status: w.status, label: w.query ?? shortId(w.correlation_id) }));
    drawScatterChart(latChart, { points, label: `End-to-end duration of ${points.length} finished workflows` });
  }

  sampler.subscribe(drawThroughput, scope);
  trackWidth(scope, tpChart, drawThroughput);
  trackWidth(scope, latChart, drawLatency);
  drawLatency();
}
