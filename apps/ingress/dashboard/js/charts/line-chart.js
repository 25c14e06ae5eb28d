import { emptyNote, frame, linear, niceMax, niceTicks, s, yGrid } from './svg.js';

/**
 * Time series as lines (the throughput chart). `series: [{name, cls, points: [{t, v|null}]}]`; a
 * null value breaks the line. The x axis is relative to `now` ("-2m … now").
 */
export function drawLineChart(container, { series, windowMs, now = Date.now(), height = 190, label, formatY }) {
  const { svg, width } = frame(container, height, label);
  const m = { left: 44, right: 12, top: 10, bottom: 24 };
  const t0 = now - windowMs;
  const x = linear([t0, now], [m.left, width - m.right]);
  const values = series.flatMap((se) => se.points.filter((p) => p.t >= t0 && p.v !== null).map((p) => p.v));
  const top = niceMax(Math.max(...values, 0) * 1.1 || 1);
  const y = linear([0, top], [height - m.bottom, m.top]);
  yGrid(svg, niceTicks(0, top, 4), y, { left: m.left, right: width - m.right, format: formatY });

  const stepMs = windowMs <= 120_000 ? 30_000 : 60_000;
  for (let t = now; t >= t0; t -= stepMs) {
    const ago = Math.round((now - t) / 1000);
    const text = ago === 0 ? 'now' : ago % 60 === 0 ? `-${ago / 60}m` : `-${ago}s`;
    svg.append(s('text', { x: x(t), y: height - 6, class: 'tick', 'text-anchor': ago === 0 ? 'end' : 'middle' }, text));
  }

  if (values.length === 0) emptyNote(svg, width, height - m.bottom, 'collecting samples…');
  for (const se of series) {
    const runs = [];
    let run = [];
    for (const p of se.points) {
      if (p.t < t0) continue;
      if (p.v === null) {
        if (run.length) runs.push(run);
        run = [];
      } else run.push(`${x(p.t).toFixed(1)},${y(p.v).toFixed(1)}`);
    }
    if (run.length) runs.push(run);
    for (const r of runs) {
      if (se.area && r.length > 1) {
        const first = r[0].split(',')[0];
        const last = r[r.length - 1].split(',')[0];
        svg.append(s('polygon', { points: `${first},${y(0)} ${r.join(' ')} ${last},${y(0)}`, class: `area ${se.cls}` }));
      }
      svg.append(s('polyline', { points: r.join(' '), class: `line ${se.cls}` }));
    }
  }
  container.replaceChildren(svg);
}
