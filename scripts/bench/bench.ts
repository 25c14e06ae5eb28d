import 'reflect-metadata';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, release, totalmem } from 'node:os';
import { join } from 'node:path';
import { endQuietlyWhenOutputCloses } from '@chorus/bus';
import { BenchUsageError, benchCommandLine, benchUsage, parseBenchOptions, type BenchOptions } from './bench.options';
import { REPO_ROOT, snapshotDist } from './bench.support';
import { renderChart } from './chart';
import { startChorusSystem, type ChorusSystem, type WireEnvelope } from './chorus.system';
import { renderMarkdown } from './docs.render';
import { startFloorSystem } from './floor.system';
import { measureHubMemory } from './hub-memory';
import { CpuMeter } from './measure';
import { measureEnvelopeOverhead, runRrfBenchmarks } from './micro';
import { PEER_DEPS_DIR, startMoleculerSystem } from './moleculer.system';
import { startNestSystem } from './nest.system';
import { runClosedLoop, type LoadOptions } from './load';
import { sampleTraffic } from './traffic';
import { consoleTable, checkSameWork, checkTargets, verdict } from './report';
import { toLevelResult, type BenchResults, type SystemResult } from './results';
import { SYSTEM_IDS, type SystemDefinition, type SystemId, type SystemUnderTest } from './system.types';

const SYSTEMS: Record<SystemId, SystemDefinition> = {
  'floor-core': {
    id: 'floor-core',
    label: '(a) floor, core NATS',
    summary: 'raw client; 4 hops in one process, a connection each; core pub/sub, at most once',
    start: () => startFloorSystem('floor-core', 'core', false),
  },
  'floor-js': {
    id: 'floor-js',
    label: '(a) floor, JetStream',
    summary: 'raw client; 4 hops in one process, a connection each; durable pull consumers, Nats-Msg-Id, awaited PubAck',
    start: () => startFloorSystem('floor-js', 'js', false),
  },
  'floor-js-procs': {
    id: 'floor-js-procs',
    label: '(a) floor, JetStream, 1 proc/hop',
    summary: 'the JetStream floor with each hop in its own process',
    start: () => startFloorSystem('floor-js-procs', 'js', true),
  },
  nest: {
    id: 'nest',
    label: '(b) Nest stock NATS',
    summary: '@nestjs/microservices Transport.NATS; @EventPattern → ClientProxy.emit; 4 hops in one Nest app; core NATS',
    start: () => startNestSystem(),
  },
  moleculer: {
    id: 'moleculer',
    label: '(c) Moleculer NATS',
    summary: 'Moleculer 0.14 NATS transporter; balanced events; 4 hops in one process, a broker each; core NATS',
    start: () => startMoleculerSystem(),
  },
  'floor-js-work': {
    id: 'floor-js-work',
    label: '(a′) floor, JetStream, same work',
    summary: "the JetStream floor whose hops do Chorus's own work in-process (classify, plan, search bm25 + trigram, RRF, answer)",
    start: () => startFloorSystem('floor-js-work', 'js', false, 'app'),
  },
  'nest-work': {
    id: 'nest-work',
    label: '(b′) Nest stock NATS, same work',
    summary: "Nest's stock transport whose hops do Chorus's own work in-process",
    start: () => startNestSystem('nest-work', 'app'),
  },
  'moleculer-work': {
    id: 'moleculer-work',
    label: '(c′) Moleculer NATS, same work',
    summary: "Moleculer whose hops do Chorus's own work in-process",
    start: () => startMoleculerSystem('moleculer-work', 'app'),
  },
  'chorus-aio': {
    id: 'chorus-aio',
    label: '(d) Chorus all-in-one',
    summary: 'npm start: every app in one process, real search, JetStream + dedup + validation + hub ledger',
    start: () => startChorusSystem('aio'),
  },
  'chorus-procs': {
    id: 'chorus-procs',
    label: '(e) Chorus, 1 proc/app',
    summary: 'hub, profile, intent, planner, search, responder as six processes',
    start: () => startChorusSystem('procs'),
  },
};

/** What ran this script (`chorus bench`, which says so); unset for `npm run bench`. */
const VIA = process.env.CHORUS_BENCH_COMMAND || undefined;

async function main(): Promise<void> {
  let opts: BenchOptions;
  try {
    opts = parseBenchOptions(process.argv.slice(2));
  } catch (e) {
    if (!(e instanceof BenchUsageError)) throw e;
    // No stack: the command line is wrong, not the benchmark. Exit 2, as any Chorus usage error.
    console.error(`${VIA ?? 'bench'}: ${e.message}\n\n${benchUsage(VIA)}`);
    process.exit(2);
  }
  if (opts.help) return void console.log(benchUsage(VIA));
  if (opts.render) return writeDocs(JSON.parse(readFileSync(opts.render, 'utf8')) as BenchResults);
  const quick = opts.quick;
  const started = Date.now();
  snapshotDist();
  const only = opts.only;
  const wants = (name: string) => (only.length ? only.includes(name) : !(quick && ['floor-js-procs', 'nest-work', 'moleculer-work'].includes(name)));
  const load: LoadOptions & { levels: number[] } = {
    levels: opts.concurrency ?? [1, 16, 64, 256],
    concurrency: 0,
    warmupMs: (opts.warmupS ?? (quick ? 0.25 : 2)) * 1000,
    maxWarmupMs: quick ? 3000 : 30_000,
    durationMs: (opts.durationS ?? (quick ? 0.8 : 10)) * 1000,
    minSamples: quick ? 30 : 300,
    maxDurationMs: quick ? 4000 : 30_000,
  };
  const hubCheckpoints = opts.hubCheckpoints ?? (quick ? [300, 600, 900] : [10000, 25000, 50000, 100000, 150000, 200000]);

  const results: BenchResults = {
    date: new Date().toISOString(),
    mode: only.length || opts.concurrency || opts.durationS !== undefined ? 'custom' : quick ? 'quick' : 'full',
    command: benchCommandLine(process.argv.slice(2), VIA),
    machine: describeMachine(),
    versions: describeVersions(),
    commit: describeCommit(),
    load: { concurrency: load.levels, warmupMs: load.warmupMs, maxWarmupMs: load.maxWarmupMs, durationMs: load.durationMs, minSamples: load.minSamples, maxDurationMs: load.maxDurationMs },
    systems: [],
    wallSeconds: 0,
  };

  const dir = join(REPO_ROOT, 'artifacts', 'bench');
  mkdirSync(dir, { recursive: true });
  const json = join(dir, `results-${results.date.replace(/[:.]/g, '-')}.json`);
  // Saved after every step, so a long run that dies late keeps what it measured.
  const save = () => writeFileSync(json, JSON.stringify({ ...results, wallSeconds: (Date.now() - started) / 1000 }, null, 2));
  onInterrupt = () => {
    results.interrupted = `during ${phase}`;
    save();
    console.error(`interrupted during ${phase}; what was measured is in ${json}`);
  };

  // First, while this process's heap is fresh and none of our systems runs.
  if (wants('rrf')) {
    phase = 'the RRF microbenchmark';
    console.log('\n== RRF microbenchmark');
    results.rrf = runRrfBenchmarks(quick ? 700 : 3000);
    for (const r of results.rrf) console.log(`fuseRrf ${r.name}: median ${r.usPerCall.toFixed(1)} µs/call (p10 ${r.p10.toFixed(1)}, p90 ${r.p90.toFixed(1)}; CPU ${r.cpuUsPerCall.toFixed(1)} µs; ${r.calls} calls)`);
  }

  // Chorus all-in-one also records one workflow's envelopes for the overhead report.
  const envelopeSamples: WireEnvelope[] = [];
  for (const id of SYSTEM_IDS.filter(wants)) {
    const def = SYSTEMS[id];
    phase = `the ${def.label} measurement`;
    console.log(`\n== ${def.label}: ${def.summary}`);
    results.systems.push(await measureSystem(def, load, envelopeSamples, quick ? QUICK_HOP_SAMPLES : HOP_SAMPLES));
    save();
  }

  if (wants('envelope')) {
    phase = 'the envelope overhead measurement';
    try {
      if (envelopeSamples.length === 0) {
        console.log('\n== envelope overhead: one workflow through Chorus all-in-one');
        const system = await startChorusSystem('aio');
        try {
          envelopeSamples.push(...(await system.sampleEnvelopes()));
        } finally {
          await system.stop();
        }
      }
      results.envelopes = measureEnvelopeOverhead(envelopeSamples);
      for (const e of results.envelopes) console.log(`  ${e.messageType.padEnd(22)} envelope adds ${e.overheadBytes} B to a ${e.payloadBytes} B payload (+ ${e.headerBytes} B of headers); parseEnvelope ${e.parseUs.toFixed(0)} µs`);
      save();
    } catch (e) {
      console.error(`  envelope overhead could not be measured: ${(e as Error).stack ?? e}`);
    }
  }
  if (wants('hub-rss')) {
    phase = 'the hub RSS measurement';
    const hubWarmup = quick ? 200 : 1000;
    console.log(`\n== hub RSS at ${hubCheckpoints.join(', ')} workflows${quick ? ' (quick: a small range)' : ''}`);
    try {
      const hub = await measureHubMemory({
        checkpoints: hubCheckpoints,
        concurrency: 64,
        warmup: hubWarmup,
        onPoint: (p) => {
          console.log(`  ${String(p.workflows).padStart(7)} workflows: hub RSS ${p.rssMiB.toFixed(1)} MiB (${p.rate.toFixed(0)} wf/s, ${p.elapsedS.toFixed(0)} s)`);
          // Recorded as it goes: the full range takes long, and a stopped run keeps its checkpoints.
          const points = [...(results.hubMemory?.points ?? []), p];
          const first = points[0].rssMiB;
          const drift = Math.max(...points.map((x) => Math.abs(x.rssMiB / first - 1)));
          results.hubMemory = { warmup: hubWarmup, warmupRssMiB: NaN, points, drift, failed: 0, notes: [], quick };
          save();
        },
      });
      results.hubMemory = { ...hub, quick };
      save();
    } catch (e) {
      console.error(`  hub RSS could not be measured: ${(e as Error).stack ?? e}`);
    }
  }

  results.wallSeconds = (Date.now() - started) / 1000;
  // Read again: the Moleculer systems install scripts/bench/peer-deps on first use, after the start.
  results.versions = describeVersions();
  console.log(`\n${consoleTable(results)}\n`);
  for (const t of checkTargets(results)) console.log(`target: ${t.target}: ${t.measured} → ${verdict(t.met).replace(/\*/g, '')}`);
  for (const t of checkSameWork(results)) console.log(`same work: ${t.target}: ${t.measured} → ${verdict(t.met).replace(/\*/g, '')}`);
  console.log(`\nwall time: ${results.wallSeconds.toFixed(0)} s`);

  save();
  console.log(`results: ${json}`);
  // A quick or partial run does not overwrite the committed page of a full run unless asked to.
  const write = !opts.noWrite && (opts.write || results.mode === 'full');
  if (write) writeDocs(results);
}

/** Workflows, one at a time, timed envelope by envelope for the hop breakdown, after as many to warm up (a few seconds). */
const HOP_SAMPLES = 300;
/** The same in a quick run, which is meant to take about a minute: enough for medians, not for the page. */
const QUICK_HOP_SAMPLES = 60;

async function measureSystem(def: SystemDefinition, load: LoadOptions & { levels: number[] }, envelopeSamples: WireEnvelope[], hopSamples: number): Promise<SystemResult> {
  const result: SystemResult = { id: def.id, label: def.label, summary: def.summary, startupSeconds: NaN, levels: [], notes: [] };
  const t0 = Date.now();
  let system: SystemUnderTest | undefined;
  try {
    system = await def.start();
    result.startupSeconds = (Date.now() - t0) / 1000;
    if (def.id === 'chorus-aio') envelopeSamples.push(...(await (system as ChorusSystem).sampleEnvelopes()));
    if (def.id.startsWith('chorus-')) {
      // A breakdown that cannot be taken is a note, not a reason to lose the system's measurements.
      try {
        const sample = await (system as ChorusSystem).sampleHops(hopSamples, hopSamples);
        result.hops = sample.hops;
        if (sample.failed > 0) result.notes.push(`hop breakdown: ${sample.failed} of ${sample.failed + sample.workflows} workflows failed and were left out`);
        for (const h of result.hops) console.log(`  hop p50 ${h.p50Ms.toFixed(2).padStart(6)} ms  p90 ${h.p90Ms.toFixed(2).padStart(6)} ms  ${h.from} -> ${h.to}`);
      } catch (e) {
        result.notes.push(`hop breakdown not measured: ${(e as Error).message.split('\n')[0]}`);
      }
    }
    const sut = system;
    result.traffic = await sampleTraffic(sut.url, () => sut.run(2_000_000_000));
    const cpu = new CpuMeter(() => ({ ...sut.processes(), driver: process.pid }));
    for (const [i, concurrency] of load.levels.entries()) {
      // The last level's in-flight workflows are not waited for: the system stops next anyway.
      const drain = i < load.levels.length - 1;
      const r = toLevelResult(await runClosedLoop(sut, { ...load, concurrency, drain }, { cpu, monitorUrl: sut.monitorUrl }));
      result.levels.push(r);
      console.log(
        `  c=${String(concurrency).padStart(3)}: ${r.throughput.toFixed(0).padStart(6)} wf/s  p50 ${r.latency.p50.toFixed(2)} p90 ${r.latency.p90.toFixed(2)} p99 ${r.latency.p99.toFixed(2)} ms  ` +
          `CPU ${r.cpuPerThousand.toFixed(2)} s/1k  ${r.bytesPerWorkflow.toFixed(0)} B/wf  n=${r.completed}  other load ${r.otherLoadCores.toFixed(2)} cores${r.steady ? '' : '  (not steady: warm-up capped)'}${r.failed ? `  FAILED ${r.failed}: ${r.firstError}` : ''}`,
      );
    }
    result.notes.push(...(await sut.notes()));
  } catch (e) {
    result.error = (e as Error).message.split('\n')[0];
    console.error(`  ${def.id} could not be measured: ${(e as Error).stack ?? e}`);
  } finally {
    await system?.stop().catch((e) => console.error(`  ${def.id} did not stop cleanly: ${(e as Error).message}`));
  }
  return result;
}

/** docs/benchmarks.md and docs/benchmarks.svg, both from the same results. */
function writeDocs(results: BenchResults): void {
  writeFileSync(join(REPO_ROOT, 'docs', 'benchmarks.md'), renderMarkdown(results));
  writeFileSync(join(REPO_ROOT, 'docs', 'benchmarks.svg'), renderChart(results));
  console.log(`${consoleTable(results)}\n\nwrote docs/benchmarks.md and docs/benchmarks.svg (${results.mode} run of ${results.date})`);
}

function describeMachine(): BenchResults['machine'] {
  const nats = spawnSync('nats-server', ['--version'], { encoding: 'utf8' });
  return {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    kernel: release(),
    node: process.version,
    natsServer: (nats.stdout || '').trim().replace(/^nats-server:\s*/, '') || 'unknown',
  };
}

function versionOf(dir: string, pkg: string): string {
  const file = join(dir, 'node_modules', pkg, 'package.json');
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version : 'not installed';
}

function describeVersions(): Record<string, string> {
  const v: Record<string, string> = {};
  for (const p of ['@nats-io/transport-node', '@nats-io/jetstream', '@nestjs/core', '@nestjs/microservices']) v[p] = versionOf(REPO_ROOT, p);
  for (const p of ['moleculer', 'nats']) v[`${p} (peer-deps)`] = versionOf(PEER_DEPS_DIR, p);
  return v;
}

/** The checked-out commit, read from .git without running git. */
function describeCommit(): string {
  try {
    const head = readFileSync(join(REPO_ROOT, '.git', 'HEAD'), 'utf8').trim();
    if (!head.startsWith('ref: ')) return head.slice(0, 12);
    const ref = head.slice(5);
    const loose = join(REPO_ROOT, '.git', ref);
    if (existsSync(loose)) return `${readFileSync(loose, 'utf8').trim().slice(0, 12)} (${ref.replace('refs/heads/', '')})`;
    const packed = readFileSync(join(REPO_ROOT, '.git', 'packed-refs'), 'utf8').split('\n').find((l) => l.endsWith(` ${ref}`));
    return packed ? `${packed.slice(0, 12)} (${ref.replace('refs/heads/', '')})` : 'unknown';
  } catch {
    return 'unknown';
  }
}

// What the run is doing, for the record of a run that is interrupted.
let phase = 'start-up';
let onInterrupt: (() => void) | undefined;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    onInterrupt?.();
    process.exit(130);
  });
}

// `chorus bench | head` ends quietly, stopping the servers and apps it started ('exit' handlers).
endQuietlyWhenOutputCloses();
main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
