/**
 * The eval's command line. The fusion defaults are the values tuned on the SciFact train split
 * (docs/retrieval.md); the targets are those of the search issue. `--recall-gain-floor` lets a
 * check accept a missed recall target above a lower, documented floor; the miss is still printed
 * as MISSED and recorded in summary.json.
 */
import { isAbsolute, resolve } from 'node:path';
import { flags } from '../bench/bench.support';
import { PROFILE_ENGINES } from '@chorus/profiles';
import type { FusionSettings } from './eval.system';

/** The profiles the eval can deploy. */
const PROFILE_NAMES = Object.keys(PROFILE_ENGINES);

export interface EvalOptions {
  corpus: string;
  queries: string;
  qrels: string;
  out: string;
  /** Profiles the deployment runs; each is also evaluated alone. */
  profiles: string[];
  /** Profiles the fused pass names; null lets the planner choose (its default route). */
  fusedProfiles: string[] | null;
  fusion: FusionSettings;
  concurrency: number;
  deadlineMs: number;
  /**
   * CHORUS_PROFILE_TIMEOUT_MS for the run. The eval measures ranking, so it gives a loaded machine
   * more slack than the 3 s default; a profile that still misses it fails the eval.
   */
  profileTimeoutMs: number;
  warmup: number;
  /** Times the fused pass runs; its wall time is the fastest (each pass runs every query end to end). */
  timedPasses: number;
  check: boolean;
  targets: EvalTargets;
  /** Path of eval-trec.mjs (or any evaluator with its `--json` output) to cross-check the figures. */
  referenceEvaluator: string | null;
  startTimeoutMs: number;
}

export interface EvalTargets {
  minBm25Ndcg: number;
  minRecallGain: number;
  /**
   * With `--check`, a fused Recall@100 below the target (best single + minRecallGain) but at or
   * above best single + this floor does not fail the check; it is still reported as missed.
   * Null: the target itself is checked.
   */
  recallGainFloor: number | null;
  maxNdcgLoss: number;
  maxFusedSeconds: number;
  /**
   * With `--check`, a fused pass slower than maxFusedSeconds but under this many seconds does not
   * fail the check; it is still reported as missed (this machine's slow phases: docs/retrieval.md).
   * Null: the target itself is checked.
   */
  fusedSecondsCeiling: number | null;
}

/**
 * The fusion tuned on SciFact train: see docs/retrieval.md. The eval's own deployment runs with it
 * (its processes get CHORUS_RRF_K, CHORUS_RANK_WINDOW, CHORUS_RRF_WEIGHTS); the product's
 * defaults (k 60, rank window 100, equal weights) are not changed by it.
 */
export const TUNED_FUSION: Readonly<FusionSettings> = Object.freeze({
  k: 1,
  rankWindow: 200,
  weights: Object.freeze({ bm25: 1, trigram: 0.5, wordvec: 0.5 }),
});

const USAGE = `usage: npm run eval -- --corpus <jsonl> --queries <jsonl> --qrels <tsv> --out <dir>
  [--profiles bm25,trigram,wordvec] [--fused-profiles planner|<list>] [--rrf-k 1] [--rank-window 200]
  [--rrf-weights bm25=1,trigram=0.5,wordvec=0.5] [--concurrency 16] [--deadline-ms 60000] [--warmup 20]
  [--timed-passes 5] [--profile-timeout-ms 10000]
  [--check] [--min-bm25-ndcg 0.67] [--min-recall-gain 0.015] [--max-ndcg-loss 0.005] [--max-fused-seconds 5]
  [--recall-gain-floor <gain>]   (--check accepts a missed recall target above best single + <gain>; reported as MISSED)
  [--fused-seconds-ceiling <s>]  (--check accepts a fused pass over --max-fused-seconds but under <s>; reported as MISSED)
  [--reference-evaluator <eval-trec.mjs>] [--start-timeout-ms 180000]`;

export function parseEvalOptions(argv: readonly string[], cwd: string): EvalOptions {
  const defaultWeights = Object.entries(TUNED_FUSION.weights).map(([p, w]) => `${p}=${w}`).join(',');
  const raw = flags(
    {
      corpus: '',
      queries: '',
      qrels: '',
      out: '',
      profiles: 'bm25,trigram,wordvec',
      'fused-profiles': 'planner',
      'rrf-k': String(TUNED_FUSION.k),
      'rank-window': String(TUNED_FUSION.rankWindow),
      'rrf-weights': defaultWeights,
      concurrency: '16',
      'deadline-ms': '60000',
      'profile-timeout-ms': '10000',
      warmup: '20',
      'timed-passes': '5',
      check: 'false',
      'min-bm25-ndcg': '0.67',
      'min-recall-gain': '0.015',
      'max-ndcg-loss': '0.005',
      'max-fused-seconds': '5',
      'recall-gain-floor': '',
      'fused-seconds-ceiling': '',
      'reference-evaluator': '',
      'start-timeout-ms': '180000',
      help: 'false',
    },
    [...argv],
  );
  if (raw.help === 'true') throw new UsageError(USAGE, true);
  const missing = ['corpus', 'queries', 'qrels', 'out'].filter((k) => !raw[k as keyof typeof raw]);
  if (missing.length > 0) throw new UsageError(`missing ${missing.map((m) => `--${m}`).join(', ')}\n${USAGE}`);
  const path = (p: string) => (isAbsolute(p) ? p : resolve(cwd, p));
  const list = (s: string) => s.split(',').map((x) => x.trim()).filter(Boolean);
  const number = (name: keyof typeof raw, min: number): number => {
    const n = Number(raw[name]);
    if (!Number.isFinite(n) || n < min) throw new UsageError(`--${name} must be a number >= ${min}, got ${raw[name]}`);
    return n;
  };
  const weights: Record<string, number> = {};
  for (const item of list(raw['rrf-weights'])) {
    const [profile, value] = item.split('=');
    if (!profile || !(Number(value) >= 0)) throw new UsageError(`--rrf-weights must look like bm25=1,trigram=0.5; bad entry ${item}`);
    weights[profile] = Number(value);
  }
  const profiles = list(raw.profiles);
  const unknown = profiles.filter((p) => !(PROFILE_NAMES as readonly string[]).includes(p));
  if (unknown.length > 0 || profiles.length === 0) throw new UsageError(`--profiles must name profiles of ${PROFILE_NAMES.join(', ')}; got ${JSON.stringify(raw.profiles)}`);
  const fused = raw['fused-profiles'];
  const notDeployed = fused === 'planner' ? [] : list(fused).filter((p) => !profiles.includes(p));
  if (notDeployed.length > 0) throw new UsageError(`--fused-profiles names ${notDeployed.join(', ')}, which --profiles does not run (${profiles.join(', ')})`);
  return {
    corpus: path(raw.corpus),
    queries: path(raw.queries),
    qrels: path(raw.qrels),
    out: path(raw.out),
    profiles,
    fusedProfiles: fused === 'planner' ? null : list(fused),
    // Weights of profiles this run does not deploy would be noise in the planner's config.
    fusion: { k: number('rrf-k', 0), rankWindow: number('rank-window', 1), weights: Object.fromEntries(Object.entries(weights).filter(([p]) => profiles.includes(p))) },
    concurrency: number('concurrency', 1),
    deadlineMs: number('deadline-ms', 100),
    profileTimeoutMs: number('profile-timeout-ms', 10),
    warmup: number('warmup', 0),
    timedPasses: Math.floor(number('timed-passes', 1)),
    check: raw.check === 'true',
    targets: {
      minBm25Ndcg: number('min-bm25-ndcg', 0),
      minRecallGain: number('min-recall-gain', -1),
      recallGainFloor: recallGainFloor(raw['recall-gain-floor'], Number(raw['min-recall-gain'])),
      maxNdcgLoss: number('max-ndcg-loss', 0),
      maxFusedSeconds: number('max-fused-seconds', 0),
      fusedSecondsCeiling: fusedSecondsCeiling(raw['fused-seconds-ceiling'], Number(raw['max-fused-seconds'])),
    },
    referenceEvaluator: raw['reference-evaluator'] ? path(raw['reference-evaluator']) : null,
    startTimeoutMs: number('start-timeout-ms', 1000),
  };
}

/** The floor must sit below the target it relaxes: a floor above it would be a stricter target in disguise. */
function recallGainFloor(value: string, target: number): number | null {
  if (value === '') return null;
  const floor = Number(value);
  if (!Number.isFinite(floor) || !(floor < target)) {
    throw new UsageError(`--recall-gain-floor must be a number below --min-recall-gain (${target}), got ${value}`);
  }
  return floor;
}

/** The ceiling must sit above the target it relaxes, as the recall floor sits below its own. */
function fusedSecondsCeiling(value: string, target: number): number | null {
  if (value === '') return null;
  const ceiling = Number(value);
  if (!Number.isFinite(ceiling) || !(ceiling > target)) {
    throw new UsageError(`--fused-seconds-ceiling must be a number above --max-fused-seconds (${target}), got ${value}`);
  }
  return ceiling;
}

export class UsageError extends Error {
  readonly code = 'EVAL_USAGE';
  /** What `--help` asked for: the usage, on stdout, exit 0. */
  constructor(
    message: string,
    readonly asked = false,
  ) {
    super(message);
  }
}
