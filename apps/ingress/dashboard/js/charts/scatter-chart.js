import { emptyNote, frame, linear, log10, logTicks, niceMax, niceTicks, s, yGrid } from './svg.js';
import { fmtMs, fmtTime } from '../lib/dom.js';

/**
 * End-to-end durations of finished workflows: one dot per workflow at its finish time, coloured by
 * status, with dashed p50 and p99 lines. The y axis turns logarithmic when durations span more than
 * an order of magnitude and a half (a timed-out workflow would flatten the others).
 */
export function drawScatterChart(container, { points, height = 190, label }) {
  const { svg, width } = frame(container, height, label);
  const m = { left: 52, right: 12, top: 10, bottom: 24 };
  if (points.length === 0) {
    emptyNote(svg, width, height, 'no finished workflows in the list yet');
    container.replaceChildren(svg);
    return;
  }
  const ts = points.map((p) => p.t);
  let t0 = Math.min(...ts);
  let t1 = Math.max(...ts);
  if (t1 - t0 < 1000) {
    t0 -= 500;
    t1 += 500;
  }
  const x = linear([t0, t1], [m.left + 4, width - m.right - 4]);
  const vs = points.map((p) => p.v);
  const lo = Math.max(1, Math.min(...vs));
  const hi = Math.max(...vs);
  const useLog = hi / lo > 30;
  const yMax = useLog ? hi * 1.2 : niceMax(hi * 1.1);
  const yMin = useLog ? lo / 1.2 : 0;
  const y = (useLog ? log10 : linear)([yMin, yMax], [height - m.bottom, m.top]);
  const ticks = useLog ? logTicks(yMin, yMax) : niceTicks(0, yMax, 4);
  yGrid(svg, ticks, y, { left: m.left, right: width - m.right, format: fmtMs });
  for (const t of [t0, (t0 + t1) / 2, t1]) {
    svg.append(s('text', { x: x(t), y: height - 6, class: 'tick', 'text-anchor': t === t0 ? 'start' : t === t1 ? 'end' : 'middle' }, fmtTime(new Date(t).toISOString()).slice(0, 8)));
  }
  const sorted = [...vs].sort((a, b) => a - b);
  for (const [name, q] of [['p50', 0.5], ['p99', 0.99]]) {
    const v = sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
    const yy = y(v);
    svg.append(
      s('line', { x1: m.left, x2: width - m.right, y1: yy, y2: yy, class: `quantile q-${name}` }),
      s('text', { x: width - m.right - 2, y: yy - 4, class: 'tick quantile-label', 'text-anchor': 'end' }, `${name} ${fmtMs(v)}`),
    );
  }
  for (const p of points) {
    svg.append(s('circle', { cx: x(p.t).toFixed(1), cy: y(p.v).toFixed(1), r: 3.5, class: `dot status-${p.status}` }, s('title', {}, `${p.label}: ${fmtMs(p.v)} (${p.status})`)));
  }
  container.replaceChildren(svg);
}
