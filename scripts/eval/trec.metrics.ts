/**
 * TREC run files and the three measures the eval reports, with trec_eval's conventions (the same
 * as /shared/datasets/eval-trec.mjs): a run is ordered by score descending, ties by docid
 * descending, the rank column unused; nDCG@10 with linear gain; Recall@100; MRR@10; averages over
 * every judged query with at least one relevant document, a query missing from the run scoring 0.
 */

/** qid -> docid -> relevance grade. */
export type Qrels = Map<string, Map<string, number>>;
/** qid -> docids, best first. */
export type Rankings = Map<string, string[]>;

export interface QueryMeasures {
  ndcg10: number;
  recall100: number;
  mrr10: number;
}

export interface Measures extends QueryMeasures {
  /** Queries averaged over. */
  queries: number;
  /** Judged queries the run has no line for (each scored 0). */
  missing: number;
  perQuery: Map<string, QueryMeasures>;
}

/** One retrieved document of a query, as the system ranked it. */
export interface RunEntry {
  id: string;
  score: number;
}

/** `qid docid rel` or `qid iter docid rel` lines; a line whose last field is not a number (a header) is skipped. */
export function parseQrels(text: string): Qrels {
  const qrels: Qrels = new Map();
  for (const raw of text.split(/\r?\n/)) {
    const fields = raw.trim().split(/\s+/);
    if (fields.length < 3 || fields[0] === '') continue;
    const relevance = Number(fields[fields.length - 1]);
    if (!Number.isFinite(relevance)) continue;
    const docid = fields.length >= 4 ? fields[2] : fields[1];
    let judged = qrels.get(fields[0]);
    if (!judged) qrels.set(fields[0], (judged = new Map()));
    judged.set(docid, relevance);
  }
  return qrels;
}

/** A TREC run's rankings: by score descending, ties by docid descending; a repeated (qid, docid) keeps its first line. */
export function parseRun(text: string): Rankings {
  const byQuery = new Map<string, Map<string, number>>();
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line) continue;
    const fields = line.split(/\s+/);
    if (fields.length < 6) throw new Error(`bad run line (need 6 fields): ${line}`);
    const score = Number(fields[4]);
    if (!Number.isFinite(score)) throw new Error(`bad score in run line: ${line}`);
    let docs = byQuery.get(fields[0]);
    if (!docs) byQuery.set(fields[0], (docs = new Map()));
    if (!docs.has(fields[2])) docs.set(fields[2], score);
  }
  const rankings: Rankings = new Map();
  for (const [qid, docs] of byQuery) {
    const sorted = [...docs.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? 1 : a[0] > b[0] ? -1 : 0));
    rankings.set(qid, sorted.map(([docid]) => docid));
  }
  return rankings;
}

/**
 * Run lines for one query, in the system's order. The score column is the system's score, made
 * strictly decreasing (an exact tie takes the next double below the previous line's score), so a
 * trec_eval-style reader, which re-sorts by score and breaks ties by docid, sees the system's own
 * order rather than a re-broken tie.
 */
export function toRunLines(qid: string, entries: readonly RunEntry[], tag: string): string[] {
  const lines: string[] = [];
  let previous = Infinity;
  // A run line's fields are separated by white space: an id holding some would shift the columns
  // of every reader (and score the run as if nothing was found).
  const spaced = /\s/.test(qid) ? qid : entries.find((e) => /\s/.test(e.id))?.id;
  if (spaced !== undefined) throw new RangeError(`id ${JSON.stringify(spaced)} holds white space, which a TREC run file cannot: give the corpus and the queries ids without it`);
  entries.forEach((entry, i) => {
    let score = entry.score;
    if (!(score < previous)) score = nextDown(previous);
    previous = score;
    lines.push(`${qid} Q0 ${entry.id} ${i + 1} ${score} ${tag}`);
  });
  return lines;
}

/** The largest double below `x` (finite `x`). */
function nextDown(x: number): number {
  if (x === 0) return -Number.MIN_VALUE;
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bits = view.getBigInt64(0);
  view.setBigInt64(0, x > 0 ? bits - 1n : bits + 1n);
  return view.getFloat64(0);
}

/** nDCG@10, Recall@100 and MRR@10 of one ranking against one query's judgements. */
export function measureQuery(judged: ReadonlyMap<string, number>, ranking: readonly string[]): QueryMeasures {
  const gain = (docid: string): number => Math.max(0, judged.get(docid) ?? 0);
  let dcg = 0;
  let reciprocalRank = 0;
  for (let i = 0; i < Math.min(10, ranking.length); i++) {
    const g = gain(ranking[i]);
    dcg += g / Math.log2(i + 2);
    if (g > 0 && reciprocalRank === 0) reciprocalRank = 1 / (i + 1);
  }
  const ideal = [...judged.values()].filter((r) => r > 0).sort((a, b) => b - a);
  let idcg = 0;
  for (let i = 0; i < Math.min(10, ideal.length); i++) idcg += ideal[i] / Math.log2(i + 2);
  let found = 0;
  for (let i = 0; i < Math.min(100, ranking.length); i++) if (gain(ranking[i]) > 0) found++;
  return { ndcg10: idcg > 0 ? dcg / idcg : 0, recall100: ideal.length > 0 ? found / ideal.length : 0, mrr10: reciprocalRank };
}

/** Means over every judged query with a relevant document; a query the run lacks scores 0. */
export function evaluateRun(qrels: Qrels, rankings: Rankings): Measures {
  const perQuery = new Map<string, QueryMeasures>();
  let missing = 0;
  for (const [qid, judged] of qrels) {
    if (![...judged.values()].some((r) => r > 0)) continue;
    const ranking = rankings.get(qid);
    if (!ranking) missing++;
    perQuery.set(qid, measureQuery(judged, ranking ?? []));
  }
  const mean = (key: keyof QueryMeasures): number => {
    if (perQuery.size === 0) return 0;
    let sum = 0;
    for (const m of perQuery.values()) sum += m[key];
    return sum / perQuery.size;
  };
  return { ndcg10: mean('ndcg10'), recall100: mean('recall100'), mrr10: mean('mrr10'), queries: perQuery.size, missing, perQuery };
}
