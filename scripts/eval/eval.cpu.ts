/**
 * Where a pass's time goes: the CPU seconds each process of the evaluated system used during it,
 * and how busy the whole machine was (Linux /proc; elsewhere the figures are simply absent). A
 * wall time far above the busiest process's CPU time means waiting; a machine far busier than the
 * system means other load shared the cores.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

/** Process name -> pid. */
export type ProcessTable = Record<string, number | undefined>;

export interface CpuSample {
  /** CPU seconds (user + system) per process so far. */
  processes: Record<string, number>;
  /** Busy CPU seconds of the whole machine so far, all cores; null when unreadable. */
  machine: number | null;
  /** Cores the machine has online. */
  cores: number;
  at: number;
}

/** Linux's USER_HZ: 100 on every mainstream architecture, the unit of /proc/<pid>/stat times. */
const TICKS_PER_SECOND = 100;

export function sampleCpu(table: ProcessTable): CpuSample {
  const processes: Record<string, number> = {};
  for (const [name, pid] of Object.entries(table)) {
    if (pid === undefined) continue;
    if (pid === process.pid) {
      const usage = process.cpuUsage();
      processes[name] = (usage.user + usage.system) / 1e6;
      continue;
    }
    const seconds = processCpuSeconds(pid);
    if (seconds !== null) processes[name] = seconds;
  }
  return { processes, machine: machineBusySeconds(), cores: availableParallelism(), at: Date.now() };
}

/** One line: each process's CPU seconds between two samples, and the machine's. */
export function formatCpu(before: CpuSample, after: CpuSample): string | null {
  const parts = Object.entries(after.processes)
    .filter(([name]) => before.processes[name] !== undefined)
    .map(([name, t]) => [name, t - before.processes[name]] as const);
  if (parts.length === 0) return null;
  const wall = (after.at - before.at) / 1000;
  const total = parts.reduce((sum, [, t]) => sum + t, 0);
  const processes = parts.map(([name, t]) => `${name} ${t.toFixed(2)}`).join(', ');
  let machine = '';
  if (before.machine !== null && after.machine !== null) {
    const busy = after.machine - before.machine;
    const capacity = `${(wall * after.cores).toFixed(2)} core-s (${after.cores} cores x ${wall.toFixed(2)} s)`;
    machine = `; machine busy ${busy.toFixed(2)} of ${capacity}, ${Math.max(0, busy - total).toFixed(2)} of it outside the eval`;
  }
  return `CPU s: ${processes}; eval total ${total.toFixed(2)}${machine}`;
}

function processCpuSeconds(pid: number): number | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 2 (the command) is in parentheses and may hold spaces: count from after the last ')'.
    const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(rest[11]) + Number(rest[12]);
    return Number.isFinite(ticks) ? ticks / TICKS_PER_SECOND : null;
  } catch {
    return null;
  }
}

function machineBusySeconds(): number | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n').find((l) => l.startsWith('cpu '));
    if (!line) return null;
    const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
    return (user + nice + system + irq + softirq + (steal || 0)) / TICKS_PER_SECOND;
  } catch {
    return null;
  }
}
