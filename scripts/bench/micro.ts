import { createEnvelope, deriveEnvelope, parseEnvelope, workflowSubject, type Envelope, type MessageType } from '@chorus/envelope';
import { defaultRrfOptions, fuseRrf, type RankedList, type RrfOptions } from '@chorus/fusion';
import type { WireEnvelope } from './chorus.system';
import { median, percentile } from './measure';

export interface RrfCase {
  name: string;
  lists: number;
  size: number;
  options: RrfOptions;
  /** Median over batches of the mean wall-clock microseconds per call within a batch. */
  usPerCall: number;
  p10: number;
  p90: number;
  /**
   * The same median in CPU time of this process (user + system). Time the process spent descheduled
   * (another job on a shared machine) does not count; its GC threads do.
   */
  cpuUsPerCall: number;
  calls: number;
  fusedItems: number;
}

/** Deterministic pseudo-random numbers (mulberry32), so every run fuses the same lists. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * `lists` rankings of `size` ids each, drawn from a pool twice the size, so that lists overlap the
 * way two search profiles over one corpus do (about half of each list is shared with another).
 */
export function createRankedLists(lists: number, size: number, seed = 42): RankedList[] {
  const rnd = random(seed);
  const pool = Array.from({ length: size * 2 }, (_, i) => `docs/section-${i}.md#part-${i % 7}`);
  return Array.from({ length: lists }, (_, l) => {
    const ids = [...pool];
    for (let i = ids.length - 1; i > 0; i--) {
      const j = Math.floor(rnd() * (i + 1));
      [ids[i], ids[j]] = [ids[j], ids[i]];
    }
    return { profile: `profile-${l}`, ids: ids.slice(0, size) };
  });
}

/** Times `fuseRrf` in batches of ~10 ms after a warm-up; reports the median batch. */
export function timeRrf(name: string, lists: number, size: number, options: RrfOptions, budgetMs: number): RrfCase {
  const input = createRankedLists(lists, size);
  let sink = 0;
  const warmUntil = performance.now() + Math.min(300, budgetMs / 4);
  let warmCalls = 0;
  while (performance.now() < warmUntil) {
    sink += fuseRrf(input, options).length;
    warmCalls++;
  }
  const perBatch = Math.max(1, Math.round(warmCalls / (Math.min(300, budgetMs / 4) / 10)));
  const samples: number[] = [];
  const cpuSamples: number[] = [];
  const end = performance.now() + budgetMs;
  let calls = 0;
  while (performance.now() < end || samples.length < 11) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < perBatch; i++) sink += fuseRrf(input, options).length;
    samples.push(((performance.now() - t0) * 1000) / perBatch);
    const c = process.cpuUsage(c0);
    cpuSamples.push((c.user + c.system) / perBatch);
    calls += perBatch;
  }
  const sorted = [...samples].sort((a, b) => a - b);
  if (sink < 0) console.log(sink); // keeps the calls observable
  return {
    name,
    lists,
    size,
    options,
    usPerCall: median(samples),
    cpuUsPerCall: median(cpuSamples),
    p10: percentile(sorted, 10),
    p90: percentile(sorted, 90),
    calls,
    fusedItems: fuseRrf(input, options).length,
  };
}

/** 3 × 100 with Chorus's defaults (k 60, rank window 100); 10 × 1,000 with the window opened to 1,000. */
export function runRrfBenchmarks(budgetMs: number): RrfCase[] {
  return [
    timeRrf('3 × 100', 3, 100, defaultRrfOptions(), budgetMs),
    timeRrf('10 × 1,000', 10, 1000, { ...defaultRrfOptions(), rankWindow: 1000 }, budgetMs),
  ];
}

export interface EnvelopeOverhead {
  messageType: MessageType;
  agent: string;
  /** The JSON body on the wire. */
  bodyBytes: number;
  payloadBytes: number;
  /** bodyBytes − payloadBytes: what the envelope adds around its payload. */
  overheadBytes: number;
  /** The same payload wrapped by createEnvelope / deriveEnvelope, minus the payload. */
  factoryOverheadBytes: number;
  /**
   * The same envelope with only the fields of the envelope contract (docs/protocol.md; no
   * traceparent), minus the payload: the least any envelope with those names, ids and timestamps
   * can add. Absent from results saved before it was measured.
   */
  contractOverheadBytes?: number;
  headerBytes: number;
  subjectBytes: number;
  /** Median microseconds of `parseEnvelope` on these bytes (with the subject check), as every consumer does. */
  parseUs: number;
}

const bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v));

/** The envelope's fields as its public contract (docs/protocol.md) names them. */
const CONTRACT_FIELDS = [
  'message_id',
  'correlation_id',
  'causation_id',
  'tenant_id',
  'agent',
  'target_agent',
  'message_type',
  'status',
  'timestamp',
  'deadline',
  'attempt',
  'payload',
  'next_steps',
  'error_details',
  'schema_version',
] as const satisfies ReadonlyArray<keyof Envelope>;

/** The envelope's cost around each payload, from envelopes captured on the wire during a real run. */
export function measureEnvelopeOverhead(sampled: readonly WireEnvelope[]): EnvelopeOverhead[] {
  const query = sampled.find((s) => s.envelope.message_type === 'query')?.envelope;
  return sampled.map(({ envelope: e, headerBytes, subjectBytes, bodyBytes }) => {
    const rebuilt: Envelope =
      e.message_type === 'query' || !query
        ? createEnvelope({
            messageType: e.message_type,
            correlationId: e.correlation_id,
            tenantId: e.tenant_id,
            agent: e.agent,
            payload: e.payload as never,
            deadline: e.deadline,
            status: e.status,
            targetAgent: e.target_agent,
            nextSteps: e.next_steps,
            traceparent: e.traceparent,
          })
        : deriveEnvelope(query, {
            messageType: e.message_type,
            agent: e.agent,
            payload: e.payload as never,
            status: e.status,
            errorDetails: e.error_details,
            targetAgent: e.target_agent,
            nextSteps: e.next_steps,
            attempt: e.attempt,
          });
    const payloadBytes = bytes(e.payload);
    return {
      parseUs: timeParse(e),
      messageType: e.message_type,
      agent: e.agent,
      bodyBytes,
      payloadBytes,
      overheadBytes: bodyBytes - payloadBytes,
      factoryOverheadBytes: bytes(rebuilt) - payloadBytes,
      contractOverheadBytes: bytes(Object.fromEntries(CONTRACT_FIELDS.map((k) => [k, e[k]]))) - payloadBytes,
      headerBytes,
      subjectBytes,
    };
  });
}

/** What validating one envelope costs each consumer that receives it: median of 25 batches. */
function timeParse(e: Envelope): number {
  const data = Buffer.from(JSON.stringify(e));
  const subject = workflowSubject(e.tenant_id, e.message_type, e.correlation_id);
  const check = parseEnvelope(data, { subject });
  if (!check.ok) throw new Error(`a captured ${e.message_type} envelope does not parse: ${check.error.message}`);
  for (let i = 0; i < 200; i++) parseEnvelope(data, { subject });
  const samples: number[] = [];
  for (let b = 0; b < 25; b++) {
    const t0 = performance.now();
    for (let i = 0; i < 40; i++) parseEnvelope(data, { subject });
    samples.push(((performance.now() - t0) * 1000) / 40);
  }
  return median(samples);
}
