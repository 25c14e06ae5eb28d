/**
 * The benchmark's command line, run as `npm run bench -- …` or as `chorus bench …` (the CLI sets
 * CHORUS_BENCH_COMMAND so the usage and the record of a run name the command that was typed).
 */
import { existsSync } from 'node:fs';
import { SYSTEM_IDS } from './system.types';

export const SECTIONS = ['rrf', 'envelope', 'hub-rss'] as const;

export interface BenchOptions {
  help: boolean;
  quick: boolean;
  /** Systems and sections to run; empty: all of them (a quick run leaves the slowest systems out). */
  only: string[];
  /** Load levels; absent: the run's default. */
  concurrency?: number[];
  /** Measured interval per level, in seconds; absent: the run's default. */
  durationS?: number;
  /** Warm-up per level, in seconds (0: only until every client has finished one workflow). */
  warmupS?: number;
  /** Workflows at which the hub's RSS is read; absent: the run's default. */
  hubCheckpoints?: number[];
  write: boolean;
  noWrite: boolean;
  /** A saved results.json to write the pages from again, instead of a run. */
  render?: string;
}

/** Every problem with the command line, so one correction fixes them all. */
export class BenchUsageError extends Error {
  readonly code = 'BENCH_USAGE';
  constructor(readonly problems: readonly string[]) {
    super(`invalid options:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

/** `npm run bench -- --quick` or `chorus bench --quick`: how this run was asked for. */
export function benchCommandLine(argv: readonly string[], via: string | undefined): string {
  if (via) return [via, ...argv].join(' ');
  return argv.length > 0 ? `npm run bench -- ${argv.join(' ')}` : 'npm run bench';
}

export function benchUsage(via: string | undefined): string {
  return `Usage: ${via ? `${via} [options]` : 'npm run bench [-- options]'}
  --quick                  about a minute: short intervals, a small hub-RSS range, no floor-js-procs, nest-work, moleculer-work
  --only a,b               systems (${SYSTEM_IDS.join(', ')}) and/or sections (${SECTIONS.join(', ')})
  --concurrency 1,16,64    load levels (default 1,16,64,256)
  --duration S --warmup S  measured interval and warm-up per level, in seconds
  --hub-checkpoints a,b    hub RSS checkpoints (default 10000,25000,50000,100000,150000,200000)
  --write / --no-write     write docs/benchmarks.md and docs/benchmarks.svg (default: only after a full run)
  --render results.json    write them again from a saved run (after changing how they are rendered)
  -h, --help               this help
Results always go to artifacts/bench/results-<time>.json. BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=artifacts/prof"
profiles every process the benchmark starts.`;
}

const SWITCHES = ['quick', 'write', 'no-write', 'help'];
const VALUED = ['only', 'concurrency', 'duration', 'warmup', 'hub-checkpoints', 'render'];

/** Parses `--name value` (or `--name=value`) options; throws a BenchUsageError listing every problem. */
export function parseBenchOptions(argv: readonly string[]): BenchOptions {
  const problems: string[] = [];
  const raw = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '-h') {
      raw.set('help', '');
      continue;
    }
    if (!arg.startsWith('--')) {
      problems.push(`${arg}: unexpected argument (the benchmark takes only options)`);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = eq > 0 ? arg.slice(2, eq) : arg.slice(2);
    if (SWITCHES.includes(name)) {
      if (eq > 0) problems.push(`--${name} takes no value`);
      else raw.set(name, '');
    } else if (VALUED.includes(name)) {
      // A value may start with a dash (`--duration -5`), so only `--` marks the next option.
      const value = eq > 0 ? arg.slice(eq + 1) : argv[i + 1] !== undefined && !argv[i + 1].startsWith('--') ? argv[++i] : undefined;
      if (value === undefined) problems.push(`--${name} needs a value`);
      else raw.set(name, value);
    } else {
      problems.push(`--${name} is not an option`);
    }
  }

  const known: readonly string[] = [...SYSTEM_IDS, ...SECTIONS];
  const only = list(raw.get('only'));
  if (only?.length === 0) problems.push('--only needs at least one system or section');
  for (const o of only ?? []) if (!known.includes(o)) problems.push(`--only ${o}: no such system or section`);

  const options: BenchOptions = {
    help: raw.has('help'),
    quick: raw.has('quick'),
    only: only ?? [],
    concurrency: integers('concurrency', raw.get('concurrency'), problems),
    durationS: seconds('duration', raw.get('duration'), 'a positive number of seconds', (n) => n > 0, problems),
    warmupS: seconds('warmup', raw.get('warmup'), 'a number of seconds, 0 or more', (n) => n >= 0, problems),
    hubCheckpoints: integers('hub-checkpoints', raw.get('hub-checkpoints'), problems),
    write: raw.has('write'),
    noWrite: raw.has('no-write'),
    render: raw.get('render'),
  };
  if (options.write && options.noWrite) problems.push('--write and --no-write contradict each other');
  if (options.render !== undefined) {
    if (!existsSync(options.render)) problems.push(`--render ${options.render}: no such file`);
    // It writes the pages from a saved run and measures nothing: a measuring option would be ignored.
    const ignored = [...raw.keys()].filter((k) => !['render', 'help', 'write'].includes(k));
    if (ignored.length > 0) problems.push(`--render measures nothing, so ${ignored.map((k) => `--${k}`).join(', ')} would have no effect`);
  }
  if (problems.length > 0) throw new BenchUsageError(problems);
  return options;
}

function list(value: string | undefined): string[] | undefined {
  return value === undefined ? undefined : value.split(',').map((s) => s.trim()).filter(Boolean);
}

function integers(name: string, value: string | undefined, problems: string[]): number[] | undefined {
  const items = list(value);
  if (items === undefined) return undefined;
  // Decimal digits only: Number() would also read '0x10', '1e2' or '' as a count.
  if (items.length === 0 || !items.every((s) => /^\d+$/.test(s) && Number(s) > 0)) {
    problems.push(`--${name} must be a comma-separated list of positive integers, got ${JSON.stringify(value)}`);
    return undefined;
  }
  return items.map(Number);
}

function seconds(name: string, value: string | undefined, rule: string, ok: (n: number) => boolean, problems: string[]): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || !ok(n)) {
    problems.push(`--${name} must be ${rule}, got ${JSON.stringify(value)}`);
    return undefined;
  }
  return n;
}
