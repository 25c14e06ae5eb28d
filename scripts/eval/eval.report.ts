/** The eval's verdicts and its printed table (pure: figures in, lines out). */
import type { EvalTargets } from './eval.options';
import type { Measures } from './trec.metrics';

export interface PassFigures {
  /** `fused` or a profile name. */
  name: string;
  measures: Measures;
  wallMs: number;
  queries: number;
}

export interface TargetVerdict {
  target: string;
  met: boolean;
  detail: string;
  /** A lower bar `--check` accepts for a missed target (the recall gain's floor, the fused pass's ceiling), and whether it holds. */
  floor?: { bar: string; met: boolean };
}

/** True when `--check` passes: every target met, or missed above its documented floor. */
export function checkPasses(verdicts: readonly TargetVerdict[]): boolean {
  return verdicts.every((v) => v.met || v.floor?.met === true);
}

/** The issue's targets: bm25's own quality, and what fusion must add over the best single profile. */
export function checkTargets(fused: PassFigures, singles: readonly PassFigures[], targets: EvalTargets): TargetVerdict[] {
  const verdicts: TargetVerdict[] = [];
  const bm25 = singles.find((s) => s.name === 'bm25');
  if (bm25) {
    verdicts.push({
      target: `bm25 nDCG@10 >= ${targets.minBm25Ndcg}`,
      met: bm25.measures.ndcg10 >= targets.minBm25Ndcg,
      detail: `bm25 ${f4(bm25.measures.ndcg10)}`,
    });
  }
  if (singles.length > 0) {
    const bestRecall = singles.reduce((a, b) => (b.measures.recall100 > a.measures.recall100 ? b : a));
    const bestNdcg = singles.reduce((a, b) => (b.measures.ndcg10 > a.measures.ndcg10 ? b : a));
    const needRecall = bestRecall.measures.recall100 + targets.minRecallGain;
    const needNdcg = bestNdcg.measures.ndcg10 - targets.maxNdcgLoss;
    const recall: TargetVerdict = {
      target: `fused Recall@100 >= best single + ${targets.minRecallGain}`,
      // Rounded to 1e-9 so a figure that equals the bar is not failed by float noise.
      met: round9(fused.measures.recall100) >= round9(needRecall),
      detail: `fused ${f4(fused.measures.recall100)} vs ${bestRecall.name} ${f4(bestRecall.measures.recall100)} + ${targets.minRecallGain} = ${f4(needRecall)}`,
    };
    if (!recall.met && targets.recallGainFloor !== null) {
      const floor = bestRecall.measures.recall100 + targets.recallGainFloor;
      recall.floor = {
        bar: `best single + ${targets.recallGainFloor} = ${f4(floor)}`,
        met: round9(fused.measures.recall100) >= round9(floor),
      };
    }
    verdicts.push(recall);
    verdicts.push({
      target: `fused nDCG@10 >= best single - ${targets.maxNdcgLoss}`,
      met: round9(fused.measures.ndcg10) >= round9(needNdcg),
      detail: `fused ${f4(fused.measures.ndcg10)} vs ${bestNdcg.name} ${f4(bestNdcg.measures.ndcg10)} - ${targets.maxNdcgLoss} = ${f4(needNdcg)}`,
    });
  }
  const time: TargetVerdict = {
    target: `fused pass under ${targets.maxFusedSeconds} s`,
    met: fused.wallMs < targets.maxFusedSeconds * 1000,
    detail: `${fused.queries} queries in ${(fused.wallMs / 1000).toFixed(2)} s`,
  };
  if (!time.met && targets.fusedSecondsCeiling !== null) {
    time.floor = { bar: `fused pass under ${targets.fusedSecondsCeiling} s`, met: fused.wallMs < targets.fusedSecondsCeiling * 1000 };
  }
  verdicts.push(time);
  return verdicts;
}

/** One row per pass: the three measures, the wall time and the throughput. */
export function formatTable(passes: readonly PassFigures[]): string[] {
  const header = ['run', 'nDCG@10', 'Recall@100', 'MRR@10', 'queries', 'wall s', 'queries/s'];
  const rows = passes.map((p) => [
    p.name,
    f4(p.measures.ndcg10),
    f4(p.measures.recall100),
    f4(p.measures.mrr10),
    String(p.measures.queries),
    (p.wallMs / 1000).toFixed(2),
    (p.queries / (p.wallMs / 1000)).toFixed(1),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(header), ...rows.map(line)];
}

/** One line per target; a missed target with a floor says, on the same line, whether the floor holds. */
export function formatVerdicts(verdicts: readonly TargetVerdict[]): string[] {
  return verdicts.map((v) => {
    const line = `${v.met ? 'MET   ' : 'MISSED'} ${v.target}: ${v.detail}`;
    if (v.met || !v.floor) return line;
    return `${line}; TARGET NOT MET, ${v.floor.met ? 'only the' : 'and the'} CI floor (${v.floor.bar}) ${v.floor.met ? 'holds' : 'is missed too'}`;
  });
}

function f4(n: number): string {
  return n.toFixed(4);
}

function round9(n: number): number {
  return Math.round(n * 1e9) / 1e9;
}
