/** Small helpers for the hand-written SVG charts. */
const NS = 'http://www.w3.org/2000/svg';

export function s(tag, attrs, ...children) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs ?? {})) if (v !== undefined && v !== null && v !== false) el.setAttribute(k, String(v));
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/**
 * Chart widths as a ResizeObserver reported them. Reading `clientWidth` at every redraw would force a
 * synchronous layout of the whole page each time (expensive next to a 200-row table refreshed every
 * two seconds); the observer hands us the width for free.
 */
const widths = new WeakMap();

/** Redraws `el`'s chart when its width changes, and remembers the width for `frame`. */
export function trackWidth(scope, el, redraw) {
  scope.onResize(el, (width) => {
    widths.set(el, width);
    redraw();
  });
}

/** An `<svg>` as wide as its container, with an accessible name. */
export function frame(container, height, label) {
  const width = Math.max(240, widths.get(container) ?? Math.floor(container.clientWidth || 600));
  const svg = s('svg', { width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': label, class: 'chart' });
  return { svg, width, height };
}

/** Linear scale with `invert`-free simplicity: domain [d0, d1] → range [r0, r1]. */
export function linear([d0, d1], [r0, r1]) {
  const span = d1 - d0 || 1;
  return (v) => r0 + ((v - d0) / span) * (r1 - r0);
}

/** Log10 scale for latencies that span orders of magnitude. */
export function log10([d0, d1], [r0, r1]) {
  const l0 = Math.log10(Math.max(d0, 0.1));
  const l1 = Math.log10(Math.max(d1, d0 * 1.01, 0.2));
  return (v) => r0 + ((Math.log10(Math.max(v, 0.1)) - l0) / (l1 - l0)) * (r1 - r0);
}

/** About `count` round ticks covering [min, max]: 1, 2, 5 × 10^n steps. */
export function niceTicks(min, max, count = 5) {
  if (!(max > min)) return [min];
  const raw = (max - min) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((st) => st >= raw) ?? raw;
  const ticks = [];
  for (let v = Math.ceil(min / step) * step; v <= max + step * 1e-9; v += step) ticks.push(Number(v.toFixed(10)));
  return ticks;
}

/** The smallest nice number ≥ v (the top of a y axis). */
export function niceMax(v) {
  if (!(v > 0)) return 1;
  const mag = 10 ** Math.floor(Math.log10(v));
  return [1, 2, 2.5, 5, 10].map((m) => m * mag).find((n) => n >= v);
}

/** 1-2-5 ticks of a log axis between min and max. */
export function logTicks(min, max) {
  const ticks = [];
  for (let p = Math.floor(Math.log10(Math.max(min, 0.1))); 10 ** p <= max * 1.0001; p++) {
    for (const m of [1, 2, 5]) {
      const v = m * 10 ** p;
      if (v >= min * 0.9999 && v <= max * 1.0001) ticks.push(v);
    }
  }
  return ticks;
}

/** Horizontal grid lines with labels on the left. */
export function yGrid(svg, ticks, y, { left, right, format }) {
  for (const t of ticks) {
    const yy = Math.round(y(t)) + 0.5;
    svg.append(
      s('line', { x1: left, x2: right, y1: yy, y2: yy, class: 'grid' }),
      s('text', { x: left - 6, y: yy, class: 'tick', 'text-anchor': 'end', 'dominant-baseline': 'middle' }, format(t)),
    );
  }
}

/** The "no data yet" note in the middle of an empty chart. */
export function emptyNote(svg, width, height, text) {
  svg.append(s('text', { x: width / 2, y: height / 2, class: 'empty-note', 'text-anchor': 'middle' }, text));
}
