import { agentHue, fmtMs } from '../lib/dom.js';
import { frame, linear, niceMax, niceTicks, s } from './svg.js';

/**
 * Per-agent step latency: the p99 as a pale bar, the p50 as a solid one inside it, with both
 * values written next to them. `rows: [{name, p50, p99}]` (nulls: no steps in the window, or `empty`
 * says why there are none, e.g. the statistics could not be read).
 */
export function drawLatencyBars(container, { rows, label, empty = 'no steps in the window' }) {
  const labelW = 96;
  const rowH = 30;
  const height = 12 + rows.length * rowH + 22;
  const { svg, width } = frame(container, height, label);
  const max = niceMax(Math.max(1, ...rows.map((r) => r.p99 ?? 0)));
  const x = linear([0, max], [labelW, width - 150]);
  for (const t of niceTicks(0, max, 4)) {
    const xx = Math.round(x(t)) + 0.5;
    svg.append(
      s('line', { x1: xx, x2: xx, y1: 6, y2: height - 20, class: 'grid' }),
      s('text', { x: xx, y: height - 5, class: 'tick', 'text-anchor': 'middle' }, fmtMs(t)),
    );
  }
  rows.forEach((r, i) => {
    const y0 = 12 + i * rowH;
    const style = `--hue:${agentHue(r.name)}`;
    svg.append(s('text', { x: 8, y: y0 + 8, class: 'lane-label', 'dominant-baseline': 'middle', style }, r.name));
    if (r.p50 === null || r.p50 === undefined) {
      svg.append(s('text', { x: labelW, y: y0 + 8, class: 'tick', 'dominant-baseline': 'middle' }, empty));
      return;
    }
    const w99 = Math.max(2, x(r.p99) - labelW);
    const w50 = Math.max(2, x(r.p50) - labelW);
    svg.append(
      s('g', { 'data-agent': r.name },
        s('title', {}, `${r.name}: p50 ${fmtMs(r.p50)}, p99 ${fmtMs(r.p99)}`),
        s('rect', { x: labelW, y: y0, width: w99, height: 16, rx: 3, class: 'bar bar-p99', style }),
        s('rect', { x: labelW, y: y0 + 3, width: w50, height: 10, rx: 2, class: 'bar', style }),
        s('text', { x: labelW + w99 + 8, y: y0 + 8, class: 'bar-label', 'dominant-baseline': 'middle' }, `p50 ${fmtMs(r.p50)} · p99 ${fmtMs(r.p99)}`),
      ),
    );
  });
  container.replaceChildren(svg);
}
