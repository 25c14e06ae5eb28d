/**
 * `npm run eval -- --corpus <jsonl> --queries <jsonl> --qrels <tsv> --out <dir>`: runs every query
 * through a real Chorus (its own nats-server and processes), once fused and once per profile alone,
 * writes TREC runs (`<profile>.run`, `fused.run`) and prints nDCG@10, Recall@100 and MRR@10 of
 * each, with the fused pass's throughput. Exits 1 on any workflow that did not complete, 2 on bad
 * usage, and with `--check` 3 when a target is missed.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRootLogger } from '@chorus/observability';
import { UsageError, parseEvalOptions, type EvalOptions } from './eval.options';
import { runPass, type EvalQuery, type PassResult } from './eval.passes';
import { checkTargets, formatTable, formatVerdicts, type PassFigures } from './eval.report';
import { startEvalSystem } from './eval.system';
import { evaluateRun, parseQrels, parseRun, toRunLines } from './trec.metrics';

async function main(): Promise<number> {
  const options = parseEvalOptions(process.argv.slice(2), process.cwd());
  const queries = readQueries(options.queries);
  const qrels = parseQrels(readFileSync(options.qrels, 'utf8'));
  mkdirSync(options.out, { recursive: true });
  const log = createRootLogger({ name: 'eval', level: 'warn' });
  const fusedLabel = options.fusedProfiles ? options.fusedProfiles.join('+') : 'planner route';
  console.log(`eval: ${queries.length} queries, ${qrels.size} judged; profiles ${options.profiles.join(', ')}; fused: ${fusedLabel}`);
  console.log(`fusion: k=${options.fusion.k} rank_window=${options.fusion.rankWindow} weights ${JSON.stringify(options.fusion.weights)}`);

  const system = await startEvalSystem(
    {
      corpus: options.corpus,
      profiles: options.profiles,
      fusion: options.fusion,
      startTimeoutMs: options.startTimeoutMs,
      env: { CHORUS_PROFILE_TIMEOUT_MS: String(options.profileTimeoutMs) },
    },
    log,
  );
  const passes = new Map<string, PassResult>();
  try {
    console.log(`system ready in ${(system.startMs / 1000).toFixed(1)} s`);
    const pass = (profiles: string[] | null, list: readonly EvalQuery[]) =>
      runPass(system.client, list, { profiles, topK: 100, deadlineMs: options.deadlineMs, concurrency: options.concurrency });
    // Warm-up (not scored): JIT, consumers and connections settle before the timed pass.
    if (options.warmup > 0) await pass(options.fusedProfiles, queries.slice(0, options.warmup));
    passes.set('fused', await pass(options.fusedProfiles, queries));
    for (const profile of options.profiles) passes.set(profile, await pass([profile], queries));
  } finally {
    await system.stop();
  }

  const figures: PassFigures[] = [];
  let problems = 0;
  for (const [name, result] of passes) {
    const file = join(options.out, `${name}.run`);
    const tag = name === 'fused' ? 'chorus-fused' : `chorus-${name}`;
    const lines = [...result.rankings].flatMap(([qid, entries]) => toRunLines(qid, entries, tag));
    writeFileSync(file, lines.length > 0 ? `${lines.join('\n')}\n` : '');
    // Scored from the file as written, so the figures are those any TREC evaluator gets from it.
    const measures = evaluateRun(qrels, parseRun(readFileSync(file, 'utf8')));
    figures.push({ name, measures, wallMs: result.wallMs, queries: queries.length });
    for (const p of result.problems) console.error(`${name}: ${p}`);
    problems += result.problems.length;
    if (options.referenceEvaluator) crossCheck(options.referenceEvaluator, options.qrels, file, measures);
  }
  const fused = figures.find((f) => f.name === 'fused')!;
  const singles = figures.filter((f) => f.name !== 'fused');
  const used = [...passes.get('fused')!.profilesUsed].map(([p, n]) => `${p}=${n}`).join(' ');
  console.log('');
  for (const line of formatTable(figures)) console.log(line);
  console.log(`\nfused pass: ${queries.length} queries in ${(fused.wallMs / 1000).toFixed(2)} s = ${(queries.length / (fused.wallMs / 1000)).toFixed(1)} queries/s (concurrency ${options.concurrency}); profiles fused: ${used}`);
  const verdicts = checkTargets(fused, singles, options.targets);
  for (const line of formatVerdicts(verdicts)) console.log(line);
  writeSummary(options, figures, verdicts, system.startMs);
  if (problems > 0) {
    console.error(`eval: ${problems} workflow(s) did not complete cleanly`);
    return 1;
  }
  if (options.check && verdicts.some((v) => !v.met)) {
    console.error('eval: a target was missed');
    return 3;
  }
  return 0;
}

function readQueries(path: string): EvalQuery[] {
  return readFileSync(path, 'utf8')
    .split(/\r?\n/)
    .filter((line) => line.trim() !== '')
    .map((line, i) => {
      const q = JSON.parse(line) as { id?: unknown; _id?: unknown; text?: unknown };
      const id = q.id ?? q._id;
      if (typeof id !== 'string' || typeof q.text !== 'string') throw new UsageError(`${path}:${i + 1}: a query needs string "id" and "text"`);
      return { id, text: q.text };
    });
}

/** The same figures from an independent evaluator (eval-trec.mjs `--json`), to 1e-9. */
function crossCheck(evaluator: string, qrelsPath: string, runPath: string, ours: { ndcg10: number; recall100: number; mrr10: number }): void {
  const theirs = JSON.parse(execFileSync(process.execPath, [evaluator, qrelsPath, runPath, '--json'], { encoding: 'utf8' })) as Record<string, number>;
  for (const key of ['ndcg10', 'recall100', 'mrr10'] as const) {
    if (Math.abs(theirs[key] - ours[key]) > 1e-9) throw new Error(`${runPath}: ${key} ${ours[key]} here, ${theirs[key]} from ${evaluator}`);
  }
}

function writeSummary(options: EvalOptions, figures: readonly PassFigures[], verdicts: unknown, startMs: number): void {
  const runs = Object.fromEntries(
    figures.map((f) => [f.name, { ndcg10: f.measures.ndcg10, recall100: f.measures.recall100, mrr10: f.measures.mrr10, queries: f.measures.queries, wall_ms: f.wallMs }]),
  );
  const summary = { profiles: options.profiles, fused_profiles: options.fusedProfiles ?? 'planner', fusion: options.fusion, concurrency: options.concurrency, start_ms: startMs, runs, verdicts };
  writeFileSync(join(options.out, 'summary.json'), `${JSON.stringify(summary, null, 2)}\n`);
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error instanceof Error ? (error instanceof UsageError ? error.message : error.stack ?? error.message) : error);
    process.exitCode = error instanceof UsageError ? 2 : 1;
  },
);
