import { CpuMeter, cpuDelta, readMachineBusySeconds, readVarz, summarizeLatencies, wireDelta, type LatencySummary, type WireCounters } from './measure';

/** The client side of a system under test: starts one workflow and resolves when it has finished. */
export interface WorkflowDriver {
  /** Resolves when workflow `seq` completed; rejects when it failed or timed out. */
  run(seq: number): Promise<void>;
}

export interface LoadOptions {
  /** Workflows in flight at once: each of `concurrency` clients starts the next when one finishes. */
  concurrency: number;
  /**
   * Run, unmeasured, at least this long first (JIT, connection buffers, consumer pull batches), and
   * until `concurrency` workflows have completed (the pipeline has turned over once: steady state),
   * but no longer than `maxWarmupMs`.
   */
  warmupMs: number;
  maxWarmupMs: number;
  /** The measured interval. */
  durationMs: number;
  /** Extend the interval until this many (and `concurrency`) workflows ended in it, up to `maxDurationMs`. */
  minSamples: number;
  maxDurationMs: number;
  /**
   * Wait for the workflows still in flight after the interval (default), so the next level starts
   * from an idle system. Without it the clients just stop starting new ones.
   */
  drain?: boolean;
}

export interface LoadResult {
  concurrency: number;
  /** Workflows that completed inside the measured interval. */
  completed: number;
  /** Workflows that failed or timed out inside it. */
  failed: number;
  /** False when the warm-up hit its cap before `concurrency` workflows completed: not steady state. */
  steady: boolean;
  seconds: number;
  /** completed / seconds. */
  throughput: number;
  latency: LatencySummary;
  /** CPU seconds per process over the interval. */
  cpu: Record<string, number>;
  /**
   * Cores' worth of CPU used during the interval by processes outside the system under test and its
   * driver (other jobs on the machine): a large value means the numbers were disturbed.
   */
  otherLoadCores: number;
  wire: WireCounters;
  firstError?: string;
}

/**
 * Closed-loop load: `concurrency` clients each run workflows back to back. After the warm-up, a
 * measured interval records each workflow that ends inside it (its end-to-end latency from the
 * moment its client started it), the CPU of every process and the server's traffic counters.
 * Workflows still in flight when the interval ends finish unmeasured before this resolves (unless
 * `drain` is false).
 */
export async function runClosedLoop(driver: WorkflowDriver, options: LoadOptions, probes: { cpu: CpuMeter; monitorUrl: string }): Promise<LoadResult> {
  let seq = 0;
  let phase: 'warmup' | 'measure' | 'drain' = 'warmup';
  const latencies: number[] = [];
  let failed = 0;
  let warmedUp = 0;
  let firstError: string | undefined;

  const client = async () => {
    while (phase !== 'drain') {
      const i = seq++;
      const t0 = performance.now();
      try {
        await driver.run(i);
        if (phase === 'measure') latencies.push(performance.now() - t0);
        else if (phase === 'warmup') warmedUp += 1;
      } catch (e) {
        if (phase === 'measure') failed += 1;
        else if (phase === 'warmup') warmedUp += 1;
        firstError ??= (e as Error).message;
      }
    }
  };
  const clients = Array.from({ length: options.concurrency }, client);

  const w0 = performance.now();
  await sleep(options.warmupMs);
  while (warmedUp < options.concurrency && performance.now() - w0 < options.maxWarmupMs) await sleep(20);
  const steady = warmedUp >= options.concurrency;
  const cpu0 = probes.cpu.snapshot();
  const busy0 = readMachineBusySeconds();
  const wire0 = await readVarz(probes.monitorUrl);
  const t0 = performance.now();
  phase = 'measure';
  await sleep(options.durationMs);
  // At least minSamples, and at least one turnover of the clients, so a slow system's batchy
  // completions do not skew a short interval.
  const wanted = Math.max(options.minSamples, options.concurrency);
  while (latencies.length + failed < wanted && performance.now() - t0 < options.maxDurationMs) await sleep(20);
  const cpu1 = probes.cpu.snapshot();
  const busy1 = readMachineBusySeconds();
  const seconds = (performance.now() - t0) / 1000;
  phase = 'drain';
  const completed = latencies.length;
  const wire1 = await readVarz(probes.monitorUrl);
  if (options.drain ?? true) await Promise.all(clients);

  const cpu = cpuDelta(cpu0, cpu1);
  const ours = Object.values(cpu).reduce((a, b) => a + b, 0);
  return {
    concurrency: options.concurrency,
    completed,
    failed,
    steady,
    seconds,
    throughput: completed / seconds,
    latency: summarizeLatencies(latencies),
    cpu,
    otherLoadCores: Math.max(0, busy1 - busy0 - ours) / seconds,
    wire: wireDelta(wire0, wire1),
    firstError,
  };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/**
 * Pending workflows keyed by id, resolved by whatever sees their completion. A completion that
 * arrives before its workflow was registered (possible when the id is only known after a publish
 * is acknowledged) is kept until it is.
 */
export class PendingWorkflows {
  private readonly waiting = new Map<string, { resolve: () => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();
  private readonly early = new Map<string, Error | null>();

  constructor(private readonly timeoutMs: number) {}

  wait(id: string): Promise<void> {
    const known = this.early.get(id);
    if (known !== undefined) {
      this.early.delete(id);
      return known ? Promise.reject(known) : Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error(`workflow ${id}: no completion within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      this.waiting.set(id, { resolve, reject, timer });
    });
  }

  settle(id: string, error: Error | null = null): void {
    const w = this.waiting.get(id);
    if (!w) {
      if (this.early.size < 100_000) this.early.set(id, error);
      return;
    }
    this.waiting.delete(id);
    clearTimeout(w.timer);
    if (error) w.reject(error);
    else w.resolve();
  }

  get size(): number {
    return this.waiting.size;
  }
}
