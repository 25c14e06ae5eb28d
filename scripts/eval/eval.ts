/**
 * `npm run eval -- --corpus <jsonl> --queries <jsonl> --qrels <tsv> --out <dir>`: runs every query
 * through a real Chorus (its own nats-server and processes), fused (`--timed-passes` times, timed)
 * and once per profile alone, writes TREC runs (`<profile>.run`, `fused.run`) and prints nDCG@10,
 * Recall@100 and MRR@10 of each, with the fused pass's throughput and where its CPU went. Exits 1 on any workflow that did not complete, 2 on bad
 * usage, and with `--check` 3 when a target is missed (a missed recall target above
 * `--recall-gain-floor` is reported loudly but does not fail the check).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRootLogger } from '@chorus/observability';
import { UsageError, parseEvalOptions, type EvalOptions } from './eval.options';
import { runPass, type EvalQuery, type PassResult } from './eval.passes';
import { checkPasses, checkTargets, formatTable, formatVerdicts, type PassFigures, type TargetVerdict } from './eval.report';
import { formatCpu, sampleCpu } from './eval.cpu';
import { startEvalSystem } from './eval.system';
import { evaluateRun, parseQrels, parseRun, toRunLines } from './trec.metrics';

async function main(): Promise<number> {
  const options = parseEvalOptions(process.argv.slice(2), process.cwd());
  const queries = readQueries(options.queries);
  const qrels = readQrels(options.qrels);
  if (!existsSync(options.corpus)) throw new UsageError(`--corpus ${options.corpus}: no such file`);
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
  const timed: Array<{ wallMs: number; cpu: string | null }> = [];
  try {
    console.log(`system ready in ${(system.startMs / 1000).toFixed(1)} s`);
    const pass = (profiles: string[] | null, list: readonly EvalQuery[]) =>
      runPass(system.client, list, { profiles, topK: 100, deadlineMs: options.deadlineMs, concurrency: options.concurrency });
    // Warm-up (not scored): JIT, consumers and connections settle before the timed pass.
    if (options.warmup > 0) await pass(options.fusedProfiles, queries.slice(0, options.warmup));
    // The fused pass runs --timed-passes times, every query end to end each time. Its figures come
    // from the first; every repeat must rank every query identically (the system is deterministic);
    // its wall time is the fastest, since other load on a shared machine only ever adds time.
    for (let i = 0; i < options.timedPasses; i++) {
      const before = sampleCpu(system.processes);
      const result = await pass(options.fusedProfiles, queries);
      timed.push({ wallMs: result.wallMs, cpu: formatCpu(before, sampleCpu(system.processes)) });
      const first = passes.get('fused');
      if (!first) passes.set('fused', result);
      else first.problems.push(...result.problems, ...rankingDifferences(first, result, i + 1));
    }
    passes.get('fused')!.wallMs = Math.min(...timed.map((t) => t.wallMs));
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
  console.log(`\nfused pass: ${queries.length} queries in ${(fused.wallMs / 1000).toFixed(2)} s = ${(queries.length / (fused.wallMs / 1000)).toFixed(1)} queries/s (concurrency ${options.concurrency}${timed.length > 1 ? `, fastest of ${timed.length} timed passes` : ''}); profiles fused: ${used}`);
  timed.forEach((t, i) => {
    const fastest = t.wallMs === fused.wallMs ? ' (fastest)' : '';
    console.log(`  timed pass ${i + 1}/${timed.length}: ${(t.wallMs / 1000).toFixed(2)} s${fastest}${t.cpu ? `; ${t.cpu}` : ''}`);
  });
  const verdicts = checkTargets(fused, singles, options.targets);
  for (const line of formatVerdicts(verdicts)) console.log(line);
  writeSummary(options, figures, verdicts, system.startMs, timed.map((t) => t.wallMs));
  if (problems > 0) {
    console.error(`eval: ${problems} problem(s): workflows that did not complete cleanly, or rankings that changed between timed passes`);
    return 1;
  }
  const tolerated = verdicts.filter((v) => !v.met && v.floor?.met);
  for (const v of tolerated) {
    console.error(`eval: TARGET MISSED: ${v.target} (${v.detail}); accepted only because it clears the documented CI floor, ${v.floor!.bar} (docs/retrieval.md)`);
  }
  if (options.check && !checkPasses(verdicts)) {
    console.error('eval: a target was missed');
    return 3;
  }
  return 0;
}

function readQueries(path: string): EvalQuery[] {
  const queries: EvalQuery[] = [];
  const lineOf = new Map<string, number>();
  readInput(path, '--queries')
    .split(/\r?\n/)
    .forEach((line, i) => {
      if (line.trim() === '') return;
      let q: { id?: unknown; _id?: unknown; text?: unknown };
      try {
        q = JSON.parse(line) as typeof q;
      } catch (e) {
        throw new UsageError(`${path}:${i + 1}: invalid JSON (${(e as Error).message})`);
      }
      const raw = q?.id ?? q?._id;
      // Ids are read as the corpus reads them: a string, or a safe integer (qrels name it in digits).
      const id = typeof raw === 'number' && Number.isSafeInteger(raw) ? String(raw) : raw;
      if (typeof id !== 'string' || id === '' || typeof q.text !== 'string') {
        throw new UsageError(`${path}:${i + 1}: a query needs an "id" (a string or a safe integer) and a string "text"`);
      }
      // Known before anything starts: its run lines could not be written (toRunLines).
      if (/\s/.test(id)) throw new UsageError(`${path}:${i + 1}: query id ${JSON.stringify(id)} holds white space, which a TREC run file cannot`);
      // Two queries under one id would be scored as one: which one is meant?
      if (lineOf.has(id)) throw new UsageError(`${path}:${i + 1}: query id ${JSON.stringify(id)} again (first on line ${lineOf.get(id)})`);
      lineOf.set(id, i + 1);
      queries.push({ id, text: q.text });
    });
  if (queries.length === 0) throw new UsageError(`--queries ${path} holds no query (one {"id","text"} per line)`);
  return queries;
}

/** The qrels, of which at least one judgement must be read: an empty or misformatted file would score every run 0. */
function readQrels(path: string) {
  const qrels = parseQrels(readInput(path, '--qrels'));
  if (qrels.size === 0) throw new UsageError(`--qrels ${path}: no judgement read (one "query-id 0 doc-id relevance" or "query-id doc-id relevance" per line, separated by white space)`);
  return qrels;
}

function readInput(path: string, flag: string): string {
  if (!existsSync(path)) throw new UsageError(`${flag} ${path}: no such file`);
  return readFileSync(path, 'utf8');
}

/** The same figures from an independent evaluator (eval-trec.mjs `--json`), to 1e-9. */
function crossCheck(evaluator: string, qrelsPath: string, runPath: string, ours: { ndcg10: number; recall100: number; mrr10: number }): void {
  const theirs = JSON.parse(execFileSync(process.execPath, [evaluator, qrelsPath, runPath, '--json'], { encoding: 'utf8' })) as Record<string, number>;
  for (const key of ['ndcg10', 'recall100', 'mrr10'] as const) {
    if (Math.abs(theirs[key] - ours[key]) > 1e-9) throw new Error(`${runPath}: ${key} ${ours[key]} here, ${theirs[key]} from ${evaluator}`);
  }
}

/** One line per query whose ranking (ids or scores) in repeat `n` differs from the first fused pass. */
function rankingDifferences(first: PassResult, repeat: PassResult, n: number): string[] {
  const out: string[] = [];
  for (const [qid, entries] of repeat.rankings) {
    const original = first.rankings.get(qid);
    if (!original) continue;
    const same = original.length === entries.length && original.every((e, i) => e.id === entries[i].id && e.score === entries[i].score);
    if (!same) out.push(`query ${qid}: timed pass ${n} ranked it differently from pass 1`);
  }
  return out;
}

function writeSummary(
  options: EvalOptions,
  figures: readonly PassFigures[],
  verdicts: readonly TargetVerdict[],
  startMs: number,
  fusedWallMs: readonly number[],
): void {
  const runs = Object.fromEntries(
    figures.map((f) => [f.name, { ndcg10: f.measures.ndcg10, recall100: f.measures.recall100, mrr10: f.measures.mrr10, queries: f.measures.queries, wall_ms: f.wallMs }]),
  );
  const summary = {
    profiles: options.profiles,
    fused_profiles: options.fusedProfiles ?? 'planner',
    fusion: options.fusion,
    concurrency: options.concurrency,
    start_ms: startMs,
    fused_timed_passes_ms: fusedWallMs,
    runs,
    // Every target met as the issue states it; check_passes also counts a recall miss above its floor.
    all_targets_met: verdicts.every((v) => v.met),
    check_passes: checkPasses(verdicts),
    verdicts,
  };
  writeFileSync(join(options.out, 'summary.json'), `${JSON.stringify(summary, null, 2)}\n`);
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof UsageError && error.asked) {
      console.log(error.message);
      return;
    }
    console.error(error instanceof Error ? (error instanceof UsageError ? error.message : error.stack ?? error.message) : error);
    process.exitCode = error instanceof UsageError ? 2 : 1;
  },
);
