import { levelOf, type BenchResults } from './results';

/** Fixed colours per system, so charts of different runs read the same. */
const COLORS: Record<string, string> = {
  'floor-core': '#b0b0b0',
  'floor-js': '#707070',
  'floor-js-procs': '#404040',
  nest: '#e0234e',
  moleculer: '#3cafce',
  'floor-js-work': '#8d6e63',
  'nest-work': '#f48fb1',
  'moleculer-work': '#90caf9',
  'chorus-aio': '#2e7d32',
  'chorus-procs': '#8bc34a',
};

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

interface LogAxis {
  lo: number;
  hi: number;
  y(v: number): number;
  ticks: number[];
}

function logAxis(values: number[], top: number, bottom: number): LogAxis {
  const finite = values.filter((v) => Number.isFinite(v) && v > 0);
  const lo = 10 ** Math.floor(Math.log10(Math.min(...finite, 1)));
  const hi = 10 ** Math.ceil(Math.log10(Math.max(...finite, 10)));
  const ticks: number[] = [];
  for (let t = lo; t <= hi * 1.0001; t *= 10) ticks.push(t);
  const span = Math.log10(hi) - Math.log10(lo);
  return { lo, hi, ticks, y: (v) => bottom - ((Math.log10(Math.max(v, lo)) - Math.log10(lo)) / span) * (bottom - top) };
}

const tickLabel = (t: number) => (t >= 1000 ? `${t / 1000}k` : t >= 1 ? String(t) : String(t));

function axis(parts: string[], ax: LogAxis, x0: number, x1: number, title: string): void {
  for (const t of ax.ticks) {
    const y = ax.y(t).toFixed(1);
    parts.push(`<line x1="${x0}" y1="${y}" x2="${x1}" y2="${y}" stroke="#e5e5e5"/>`);
    parts.push(`<text x="${x0 - 6}" y="${y}" text-anchor="end" dominant-baseline="middle" class="tick">${tickLabel(t)}</text>`);
  }
  parts.push(`<text x="${x0}" y="42" class="title">${esc(title)}</text>`);
}

/** The throughput of every system at every concurrency, and the latency at concurrency 1; log scales. */
export function renderChart(results: BenchResults): string {
  const systems = results.systems.filter((s) => s.levels.length > 0);
  const concurrencies = results.load.concurrency;
  const W = 1000;
  const H = 470;
  const top = 60;
  const bottom = 380;
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif">`);
  parts.push('<style>.tick{font-size:11px;fill:#555}.title{font-size:14px;font-weight:bold;fill:#222}.lab{font-size:12px;fill:#333}.val{font-size:9px;fill:#333}</style>');
  parts.push(`<rect width="${W}" height="${H}" fill="#fff"/>`);
  parts.push(`<text x="20" y="22" style="font-size:13px;fill:#444">Chorus benchmark, ${esc(results.date.slice(0, 10))}, ${results.mode} run, ${results.machine.cpus} cores, ${esc(results.machine.node)}, nats-server ${esc(results.machine.natsServer)}</text>`);

  // Left: workflows/s per concurrency.
  const lx0 = 70;
  const lx1 = 610;
  const rates = systems.flatMap((s) => s.levels.map((l) => l.throughput));
  const ra = logAxis(rates, top, bottom);
  axis(parts, ra, lx0, lx1, 'Workflows per second (log scale), by concurrency');
  const groupW = (lx1 - lx0) / concurrencies.length;
  const barW = Math.min(18, (groupW - 16) / Math.max(1, systems.length));
  concurrencies.forEach((c, gi) => {
    const gx = lx0 + gi * groupW + (groupW - barW * systems.length) / 2;
    systems.forEach((s, si) => {
      const l = levelOf(results, s.id, c);
      if (!l || !(l.throughput > 0)) return;
      const y = ra.y(l.throughput);
      const x = gx + si * barW;
      parts.push(`<rect x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${(barW - 2).toFixed(1)}" height="${(bottom - y).toFixed(1)}" fill="${COLORS[s.id] ?? '#999'}"><title>${esc(s.label)} @${c}: ${Math.round(l.throughput)} wf/s</title></rect>`);
      parts.push(`<text x="${(x + barW / 2 - 1).toFixed(1)}" y="${(y - 3).toFixed(1)}" text-anchor="middle" class="val" transform="rotate(-90 ${(x + barW / 2 - 1).toFixed(1)} ${(y - 3).toFixed(1)})" dx="14" dy="3">${Math.round(l.throughput)}</text>`);
    });
    parts.push(`<text x="${(lx0 + gi * groupW + groupW / 2).toFixed(1)}" y="${bottom + 18}" text-anchor="middle" class="lab">concurrency ${c}</text>`);
  });
  parts.push(`<line x1="${lx0}" y1="${bottom}" x2="${lx1}" y2="${bottom}" stroke="#888"/>`);

  // Right: p50 and p99 at concurrency 1.
  const rx0 = 700;
  const rx1 = 980;
  const c1 = systems.map((s) => ({ s, l: levelOf(results, s.id, 1) })).filter((e) => e.l);
  const la = logAxis(
    c1.flatMap((e) => [e.l!.latency.p50, e.l!.latency.p99]),
    top,
    bottom,
  );
  axis(parts, la, rx0, rx1, 'Latency at concurrency 1, ms (log)');
  const slot = (rx1 - rx0) / Math.max(1, c1.length);
  c1.forEach(({ s, l }, i) => {
    const x = rx0 + i * slot + slot * 0.2;
    const w = slot * 0.6;
    const y50 = la.y(l!.latency.p50);
    const y99 = la.y(l!.latency.p99);
    parts.push(`<rect x="${x.toFixed(1)}" y="${y50.toFixed(1)}" width="${w.toFixed(1)}" height="${(bottom - y50).toFixed(1)}" fill="${COLORS[s.id] ?? '#999'}"><title>${esc(s.label)} p50 ${l!.latency.p50.toFixed(2)} ms</title></rect>`);
    parts.push(`<line x1="${(x + w / 2).toFixed(1)}" y1="${y50.toFixed(1)}" x2="${(x + w / 2).toFixed(1)}" y2="${y99.toFixed(1)}" stroke="#000"/>`);
    parts.push(`<line x1="${(x + w * 0.25).toFixed(1)}" y1="${y99.toFixed(1)}" x2="${(x + w * 0.75).toFixed(1)}" y2="${y99.toFixed(1)}" stroke="#000"><title>p99 ${l!.latency.p99.toFixed(2)} ms</title></line>`);
  });
  parts.push(`<line x1="${rx0}" y1="${bottom}" x2="${rx1}" y2="${bottom}" stroke="#888"/>`);
  parts.push(`<text x="${rx0}" y="${bottom + 18}" class="lab">bar: p50; whisker: p99</text>`);

  // Legend.
  systems.forEach((s, i) => {
    const x = 70 + (i % 4) * 230;
    const y = 420 + Math.floor(i / 4) * 20;
    parts.push(`<rect x="${x}" y="${y - 10}" width="12" height="12" fill="${COLORS[s.id] ?? '#999'}"/>`);
    parts.push(`<text x="${x + 18}" y="${y}" class="lab">${esc(s.label)}</text>`);
  });
  parts.push('</svg>');
  return parts.join('\n') + '\n';
}
