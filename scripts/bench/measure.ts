import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Latency summary of one measured interval, in milliseconds. */
export interface LatencySummary {
  count: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/**
 * The p-th percentile (0–100) of ascending `sorted` values, nearest-rank method: the smallest value
 * with at least p% of the samples at or below it. Nearest rank never invents a value that was not
 * measured, which matters for p99 of a few hundred samples.
 */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile must be within 0..100, got ${p}`);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1];
}

export function summarizeLatencies(samples: readonly number[]): LatencySummary {
  const sorted = Float64Array.from(samples).sort();
  const arr = Array.from(sorted);
  const mean = arr.length ? arr.reduce((a, b) => a + b, 0) / arr.length : NaN;
  return { count: arr.length, mean, p50: percentile(arr, 50), p90: percentile(arr, 90), p99: percentile(arr, 99), max: arr.length ? arr[arr.length - 1] : NaN };
}

/** Median of unsorted values. */
export function median(values: readonly number[]): number {
  return percentile([...values].sort((a, b) => a - b), 50);
}

/** User and system CPU time of a process, in clock ticks, from the text of `/proc/<pid>/stat`. */
export function parseProcStat(text: string): { utime: number; stime: number } {
  // The command name (field 2) is in parentheses and may itself hold spaces or ')': fields are
  // counted from after the last ')'. utime and stime are fields 14 and 15 of the whole line.
  const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const utime = Number(rest[11]);
  const stime = Number(rest[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) throw new Error(`unreadable /proc stat line: ${text.slice(0, 120)}`);
  return { utime, stime };
}

let ticksPerSecond: number | undefined;

/** The kernel's clock ticks per second (`getconf CLK_TCK`, 100 on Linux almost everywhere). */
export function clockTicksPerSecond(): number {
  if (ticksPerSecond === undefined) {
    const r = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
    const n = Number(r.stdout?.trim());
    ticksPerSecond = r.status === 0 && n > 0 ? n : 100;
  }
  return ticksPerSecond;
}

/**
 * CPU seconds (user + system, all threads) each process has used so far. A process that has exited
 * keeps its last reading, so a snapshot never goes backwards.
 */
export class CpuMeter {
  private readonly last = new Map<string, number>();

  constructor(private readonly processes: () => Record<string, number | undefined>) {}

  snapshot(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [name, pid] of Object.entries(this.processes())) {
      if (pid === undefined) continue;
      try {
        const { utime, stime } = parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
        const seconds = (utime + stime) / clockTicksPerSecond();
        this.last.set(name, seconds);
        out[name] = seconds;
      } catch {
        out[name] = this.last.get(name) ?? 0;
      }
    }
    return out;
  }
}

/** Per-process CPU seconds spent between two snapshots. */
export function cpuDelta(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, t] of Object.entries(after)) out[name] = t - (before[name] ?? 0);
  return out;
}

/**
 * Busy CPU seconds of the whole machine (all cores: everything but idle and iowait) from the text of
 * `/proc/stat`. Compared with the CPU of the system under test, it shows load from anything else.
 */
export function parseMachineBusyTicks(procStat: string): number {
  const line = procStat.split('\n').find((l) => l.startsWith('cpu '));
  if (!line) throw new Error('no cpu line in /proc/stat');
  const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
  return user + nice + system + irq + softirq + (steal || 0);
}

export function readMachineBusySeconds(): number {
  return parseMachineBusyTicks(readFileSync('/proc/stat', 'utf8')) / clockTicksPerSecond();
}

/** Message traffic counters of a nats-server (`/varz`): bytes of headers + payloads, in and out. */
export interface WireCounters {
  inMsgs: number;
  outMsgs: number;
  inBytes: number;
  outBytes: number;
}

export async function readVarz(monitorUrl: string): Promise<WireCounters> {
  const res = await fetch(`${monitorUrl}/varz`);
  if (!res.ok) throw new Error(`GET ${monitorUrl}/varz: HTTP ${res.status}`);
  const v = (await res.json()) as { in_msgs: number; out_msgs: number; in_bytes: number; out_bytes: number };
  return { inMsgs: v.in_msgs, outMsgs: v.out_msgs, inBytes: v.in_bytes, outBytes: v.out_bytes };
}

export function wireDelta(before: WireCounters, after: WireCounters): WireCounters {
  return {
    inMsgs: after.inMsgs - before.inMsgs,
    outMsgs: after.outMsgs - before.outMsgs,
    inBytes: after.inBytes - before.inBytes,
    outBytes: after.outBytes - before.outBytes,
  };
}
