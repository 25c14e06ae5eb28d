import type { HubMemoryResult } from './hub-memory';
import type { LoadResult } from './load';
import type { HopLatency } from './chorus.system';
import type { EnvelopeOverhead, RrfCase } from './micro';
import type { SubjectTraffic } from './traffic';

/** One load level of one system, with the per-workflow figures derived from the interval. */
export interface LevelResult extends LoadResult {
  /** CPU seconds of every process (nats-server, the system's apps, the driver) per 1,000 workflows. */
  cpuPerThousand: number;
  /** The same, without the driver (the benchmark's client, which also plays the ingress). */
  cpuPerThousandWithoutDriver: number;
  /** Message bytes (headers + payload) the server received plus sent, per workflow. */
  bytesPerWorkflow: number;
  /** Messages the server received plus sent, per workflow. */
  messagesPerWorkflow: number;
}

export interface SystemResult {
  id: string;
  label: string;
  summary: string;
  startupSeconds: number;
  levels: LevelResult[];
  notes: string[];
  /** One workflow at concurrency 1 on the idle system, by kind of subject. */
  traffic?: SubjectTraffic[];
  /** Chorus only: where a workflow's latency goes at concurrency 1, envelope to envelope. */
  hops?: HopLatency[];
  /** Why the system could not be measured, when it could not. */
  error?: string;
}

export interface BenchResults {
  date: string;
  mode: 'quick' | 'full' | 'custom';
  command: string;
  machine: { cpus: number; cpuModel: string; memoryGiB: number; kernel: string; node: string; natsServer: string };
  versions: Record<string, string>;
  commit: string;
  load: { concurrency: number[]; warmupMs: number; maxWarmupMs: number; durationMs: number; minSamples: number; maxDurationMs: number };
  systems: SystemResult[];
  rrf?: RrfCase[];
  envelopes?: EnvelopeOverhead[];
  hubMemory?: HubMemoryResult & { quick: boolean };
  wallSeconds: number;
  /** Set when the run was stopped before it finished: where it was. */
  interrupted?: string;
}

export function toLevelResult(r: LoadResult): LevelResult {
  const total = Object.values(r.cpu).reduce((a, b) => a + b, 0);
  const perK = (s: number) => (r.completed > 0 ? (s / r.completed) * 1000 : NaN);
  return {
    ...r,
    cpuPerThousand: perK(total),
    cpuPerThousandWithoutDriver: perK(total - (r.cpu.driver ?? 0)),
    bytesPerWorkflow: r.completed > 0 ? (r.wire.inBytes + r.wire.outBytes) / r.completed : NaN,
    messagesPerWorkflow: r.completed > 0 ? (r.wire.inMsgs + r.wire.outMsgs) / r.completed : NaN,
  };
}

/** The level of `system` at `concurrency`, if it was measured. */
export function levelOf(results: BenchResults, system: string, concurrency: number): LevelResult | undefined {
  return results.systems.find((s) => s.id === system)?.levels.find((l) => l.concurrency === concurrency);
}
