/** Per-agent step statistics over a sliding window: count, error rate, p50 and p99 duration. */
export interface AgentWindowStats {
  agent: string;
  count: number;
  errors: number;
  error_rate: number;
  p50_ms: number | null;
  p99_ms: number | null;
}

const BUCKETS = 256;
const GROWTH = 1.06;

/** Log-scale bucket of a duration: about 6% resolution from 1 ms to hours. */
function bucketOf(ms: number): number {
  return Math.min(BUCKETS - 1, Math.max(0, Math.ceil(Math.log(Math.max(ms, 0) + 1) / Math.log(GROWTH))));
}

function upperBoundOf(bucket: number): number {
  return Math.round(GROWTH ** bucket - 1);
}

interface Slot {
  start: number;
  count: number;
  errors: number;
  histogram: Uint32Array;
}

/**
 * A ring of fixed time slots per agent, so memory is bounded by agents × slots, not by steps.
 */
export class AgentStats {
  private readonly agents = new Map<string, Slot[]>();

  constructor(
    readonly windowMs = 5 * 60_000,
    private readonly slots = 30,
  ) {}

  record(agent: string, durationMs: number, failed: boolean, now = Date.now()): void {
    const slot = this.slotFor(agent, now);
    slot.count += 1;
    if (failed) slot.errors += 1;
    slot.histogram[bucketOf(durationMs)] += 1;
  }

  snapshot(now = Date.now()): AgentWindowStats[] {
    const out: AgentWindowStats[] = [];
    for (const [agent, ring] of this.agents) {
      const histogram = new Uint32Array(BUCKETS);
      let count = 0;
      let errors = 0;
      for (const slot of ring) {
        if (slot.start <= now - this.windowMs) continue;
        count += slot.count;
        errors += slot.errors;
        for (let i = 0; i < BUCKETS; i++) histogram[i] += slot.histogram[i];
      }
      out.push({
        agent,
        count,
        errors,
        error_rate: count === 0 ? 0 : errors / count,
        p50_ms: percentile(histogram, count, 0.5),
        p99_ms: percentile(histogram, count, 0.99),
      });
    }
    return out.sort((a, b) => a.agent.localeCompare(b.agent));
  }

  private slotFor(agent: string, now: number): Slot {
    const width = this.windowMs / this.slots;
    const start = Math.floor(now / width) * width;
    let ring = this.agents.get(agent);
    if (!ring) {
      ring = Array.from({ length: this.slots }, () => ({ start: -Infinity, count: 0, errors: 0, histogram: new Uint32Array(BUCKETS) }));
      this.agents.set(agent, ring);
    }
    const slot = ring[Math.floor(start / width) % this.slots];
    if (slot.start !== start) {
      slot.start = start;
      slot.count = 0;
      slot.errors = 0;
      slot.histogram.fill(0);
    }
    return slot;
  }
}

function percentile(histogram: Uint32Array, count: number, q: number): number | null {
  if (count === 0) return null;
  const rank = Math.max(1, Math.ceil(q * count));
  let seen = 0;
  for (let i = 0; i < histogram.length; i++) {
    seen += histogram[i];
    if (seen >= rank) return upperBoundOf(i);
  }
  return upperBoundOf(histogram.length - 1);
}

/**
 * The agent statistics of each tenant, for a tenant's own `GET /v1/stats`: the agents serve every
 * tenant, and how much another tenant runs through them is not its business. Six slots of 50 s (the
 * all-tenant view has thirty of ten seconds), so a snapshot covers the last 250 to 300 s, and at most
 * `maxTenants` tenants, the most recently active, bound the memory: about 6 KB per agent of a tenant, some 40 MB at most with the defaults and the
 * pipeline's agents (agent names come from envelopes, so a deployment with more agents keeps more).
 */
export class TenantAgentStats {
  /** In order of last activity, the least recent first. */
  private readonly tenants = new Map<string, AgentStats>();

  constructor(
    readonly windowMs = 5 * 60_000,
    private readonly slots = 6,
    private readonly maxTenants = 1_000,
  ) {}

  record(tenant: string, agent: string, durationMs: number, failed: boolean, now = Date.now()): void {
    let stats = this.tenants.get(tenant);
    if (stats) {
      this.tenants.delete(tenant);
    } else {
      stats = new AgentStats(this.windowMs, this.slots);
      if (this.tenants.size >= this.maxTenants) this.tenants.delete(this.tenants.keys().next().value!);
    }
    this.tenants.set(tenant, stats);
    stats.record(agent, durationMs, failed, now);
  }

  /** The tenant's agents over the window; none for a tenant not seen lately (or pushed out by more active ones). */
  snapshot(tenant: string, now = Date.now()): AgentWindowStats[] {
    return this.tenants.get(tenant)?.snapshot(now) ?? [];
  }
}
