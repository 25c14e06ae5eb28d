import { levelOf, type BenchResults, type LevelResult } from './results';

/** The reference systems ratios are taken against. */
export const JS_FLOOR = 'floor-js';
export const CORE_FLOOR = 'floor-core';

export function fmtRate(v: number): string {
  if (!Number.isFinite(v)) return '–';
  return v >= 100 ? Math.round(v).toLocaleString('en-US') : v.toFixed(1);
}

export function fmtMs(v: number): string {
  if (!Number.isFinite(v)) return '–';
  return v < 10 ? v.toFixed(2) : v < 100 ? v.toFixed(1) : Math.round(v).toLocaleString('en-US');
}

export function fmtRatio(v: number | undefined): string {
  if (v === undefined || !Number.isFinite(v)) return '–';
  return v >= 10 ? `${v.toFixed(0)}×` : v >= 1 ? `${v.toFixed(2)}×` : `${v.toPrecision(2)}×`;
}

export function fmtInt(v: number): string {
  return Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : '–';
}

export interface TableRow {
  system: string;
  label: string;
  level: LevelResult;
  /** throughput / the JetStream floor's at the same concurrency. */
  rateVsJs?: number;
  rateVsCore?: number;
  /** p50 / the JetStream floor's p50 at the same concurrency. */
  p50VsJs?: number;
  p50VsCore?: number;
}

export function tableRows(results: BenchResults): TableRow[] {
  const rows: TableRow[] = [];
  for (const s of results.systems) {
    for (const level of s.levels) {
      const js = levelOf(results, JS_FLOOR, level.concurrency);
      const core = levelOf(results, CORE_FLOOR, level.concurrency);
      rows.push({
        system: s.id,
        label: s.label,
        level,
        rateVsJs: js ? level.throughput / js.throughput : undefined,
        rateVsCore: core ? level.throughput / core.throughput : undefined,
        p50VsJs: js ? level.latency.p50 / js.latency.p50 : undefined,
        p50VsCore: core ? level.latency.p50 / core.latency.p50 : undefined,
      });
    }
  }
  return rows;
}

const HEADERS = ['system', 'conc', 'wf/s', '÷JS floor', '÷core floor', 'p50 ms', 'p90 ms', 'p99 ms', 'p50 ÷JS floor', 'CPU s/1k wf', 'bytes/wf', 'failed'];

function rowCells(r: TableRow): string[] {
  const l = r.level;
  return [
    r.label,
    String(l.concurrency),
    fmtRate(l.throughput),
    fmtRatio(r.rateVsJs),
    fmtRatio(r.rateVsCore),
    fmtMs(l.latency.p50),
    fmtMs(l.latency.p90),
    fmtMs(l.latency.p99),
    fmtRatio(r.p50VsJs),
    l.cpuPerThousand.toFixed(2),
    fmtInt(l.bytesPerWorkflow),
    String(l.failed),
  ];
}

/** The main table as fixed-width text, for the terminal. */
export function consoleTable(results: BenchResults): string {
  const rows = tableRows(results).map(rowCells);
  const widths = HEADERS.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i < 1 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(HEADERS), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** The main table in Markdown. */
export function markdownTable(results: BenchResults): string {
  const rows = tableRows(results).map(rowCells);
  return [
    `| ${HEADERS.join(' | ')} |`,
    `|${HEADERS.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
}

export interface TargetCheck {
  target: string;
  measured: string;
  /** null when this run did not measure it. */
  met: boolean | null;
}

/** The issue's targets, checked against this run. */
export function checkTargets(results: BenchResults): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const floor1 = levelOf(results, JS_FLOOR, 1);
  for (const id of ['chorus-aio', 'chorus-procs']) {
    const c1 = levelOf(results, id, 1);
    const ratio = c1 && floor1 ? c1.latency.p50 / floor1.latency.p50 : undefined;
    checks.push({
      target: `${id}: p50 ≤ 2× the JetStream floor's at concurrency 1`,
      measured: ratio === undefined ? 'not measured' : `${fmtMs(c1!.latency.p50)} ms vs ${fmtMs(floor1!.latency.p50)} ms = ${fmtRatio(ratio)}`,
      met: ratio === undefined ? null : ratio <= 2,
    });
  }
  for (const id of ['chorus-aio', 'chorus-procs']) {
    const c = levelOf(results, id, 64);
    const nest = levelOf(results, 'nest', 64);
    const mol = levelOf(results, 'moleculer', 64);
    const parts = [nest && `Nest ${fmtRate(nest.throughput)}`, mol && `Moleculer ${fmtRate(mol.throughput)}`].filter(Boolean).join(', ');
    checks.push({
      target: `${id}: throughput ≥ Nest stock and ≥ Moleculer at concurrency 64 (with durability and dedup)`,
      measured: c && (nest || mol) ? `${fmtRate(c.throughput)} wf/s vs ${parts}` : 'not measured',
      met: c && nest && mol ? c.throughput >= nest.throughput && c.throughput >= mol.throughput : null,
    });
  }
  const rrf = results.rrf?.find((r) => r.lists === 3 && r.size === 100);
  checks.push({
    target: 'RRF 3 × 100 ≤ 50 µs',
    measured: rrf ? `${rrf.usPerCall.toFixed(1)} µs${rrf.cpuUsPerCall !== undefined ? ` wall, ${rrf.cpuUsPerCall.toFixed(1)} µs CPU` : ''} (median batch)` : 'not measured',
    met: rrf ? rrf.usPerCall <= 50 : null,
  });
  const hub = results.hubMemory;
  if (hub && hub.points.length > 0) {
    const first = hub.points[0];
    const last = hub.points[hub.points.length - 1];
    const full = first.workflows <= 10_000 && last.workflows >= 200_000;
    checks.push({
      target: 'hub RSS flat (±20 %) from 10k to 200k workflows',
      measured: `${first.rssMiB.toFixed(0)} MiB at ${fmtInt(first.workflows)} → ${last.rssMiB.toFixed(0)} MiB at ${fmtInt(last.workflows)}; largest drift ${(hub.drift * 100).toFixed(0)} %${full ? '' : ' (shorter range: indicative only)'}`,
      // Below 10k the hub is still filling its caches and recent index: a short range decides nothing.
      met: full ? hub.drift <= 0.2 : null,
    });
  } else checks.push({ target: 'hub RSS flat (±20 %) from 10k to 200k workflows', measured: 'not measured', met: null });
  const env = results.envelopes;
  if (env && env.length > 0) {
    const worst = env.reduce((a, b) => (b.overheadBytes > a.overheadBytes ? b : a));
    const contract = worst.contractOverheadBytes === undefined ? '' : `; the envelope contract's own fields (docs/protocol.md) alone: ${worst.contractOverheadBytes} B`;
    checks.push({ target: 'envelope ≤ 300 bytes beyond its payload', measured: `largest: ${worst.overheadBytes} B (${worst.messageType} from ${worst.agent})${contract}`, met: worst.overheadBytes <= 300 });
  } else checks.push({ target: 'envelope ≤ 300 bytes beyond its payload', measured: 'not measured', met: null });
  return checks;
}

/** The baselines whose hops do Chorus's own work (app-work.ts). */
export const SAME_WORK = { floor: 'floor-js-work', nest: 'nest-work', moleculer: 'moleculer-work' } as const;

/**
 * The latency and throughput targets asked again of the same-work baselines: what Chorus's
 * machinery (envelopes and their validation, profiles and vocabulary over request/reply, the hub's
 * ledger) costs with the application's work held equal. Not the issue's targets, which are
 * against the trivial baselines ({@link checkTargets}); a reading beside them.
 */
export function checkSameWork(results: BenchResults): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const floor1 = levelOf(results, SAME_WORK.floor, 1);
  for (const id of ['chorus-aio', 'chorus-procs']) {
    const c1 = levelOf(results, id, 1);
    const ratio = c1 && floor1 ? c1.latency.p50 / floor1.latency.p50 : undefined;
    checks.push({
      target: `${id}: p50 ≤ 2× the same-work JetStream floor's at concurrency 1`,
      measured: ratio === undefined ? 'not measured' : `${fmtMs(c1!.latency.p50)} ms vs ${fmtMs(floor1!.latency.p50)} ms = ${fmtRatio(ratio)}`,
      met: ratio === undefined ? null : ratio <= 2,
    });
  }
  for (const id of ['chorus-aio', 'chorus-procs']) {
    const c = levelOf(results, id, 64);
    const peers = [SAME_WORK.nest, SAME_WORK.moleculer].map((p) => levelOf(results, p, 64));
    const [nest, mol] = peers;
    const floor = levelOf(results, SAME_WORK.floor, 64);
    const parts = [nest && `Nest ${fmtRate(nest.throughput)}`, mol && `Moleculer ${fmtRate(mol.throughput)}`, floor && `JetStream floor ${fmtRate(floor.throughput)}`].filter(Boolean).join(', ');
    checks.push({
      target: `${id}: throughput ≥ Nest stock and ≥ Moleculer, each doing the same work, at concurrency 64`,
      measured: c && parts ? `${fmtRate(c.throughput)} wf/s vs ${parts}` : 'not measured',
      met: c && nest && mol ? c.throughput >= nest.throughput && c.throughput >= mol.throughput : null,
    });
  }
  return checks;
}

export function verdict(met: boolean | null): string {
  return met === null ? '—' : met ? 'met' : '**not met**';
}
