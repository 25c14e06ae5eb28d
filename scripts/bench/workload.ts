/**
 * The workload every system runs: a workflow of five hops, ingress → intent → planner → search →
 * responder, then the result back to the client.
 *
 * In the baselines (the floor, Nest's stock transport, Moleculer) the benchmark's driver is the
 * ingress: it builds the request below, serializes it and publishes it. Each of the four other hops
 * is a trivial but real step: parse the JSON message, append a step record and a small, fixed,
 * role-shaped field (nothing is classified, planned, searched or answered), serialize, publish to
 * the next hop. The responder publishes the finished message to the client's completion subject.
 * With Nest and Moleculer the frameworks parse and serialize; the handler mutates the object.
 *
 * The "same work" variants of the baselines replace that trivial step with Chorus's own work for
 * each role (app-work.ts), so that the gap to Chorus is its machinery alone.
 */
export const AGENT_HOPS = ['intent', 'planner', 'search', 'responder'] as const;
export type AgentHop = (typeof AGENT_HOPS)[number];

/** The hop after `hop`, or `done` (the client's completion subject) after the responder. */
export function nextHop(hop: AgentHop): AgentHop | 'done' {
  const i = AGENT_HOPS.indexOf(hop);
  return i === AGENT_HOPS.length - 1 ? 'done' : AGENT_HOPS[i + 1];
}

export interface BenchStep {
  agent: string;
  at: string;
}

/** The baseline's message: the same request fields a Chorus query carries, plus what hops append. */
export interface BenchMessage {
  id: string;
  tenant_id: string;
  query: string;
  session_id: string | null;
  profiles: string[] | null;
  top_k: number;
  require_all: boolean;
  deadline: string;
  traceparent: string;
  steps: BenchStep[];
  classification?: unknown;
  plan?: unknown;
  results?: unknown;
  answer?: unknown;
}

const TOPICS = ['duplicates', 'deadlines', 'the correlation hub', 'reciprocal rank fusion', 'dead letters', 'profiles', 'retries', 'the envelope'];

/** The i-th query text; Chorus and the baselines get the same sequence. */
export function queryText(i: number): string {
  return `how does chorus handle ${TOPICS[i % TOPICS.length]} ${i}`;
}

export function createRequest(id: string, i: number, deadlineMs = 60_000): BenchMessage {
  const now = Date.now();
  return {
    id,
    tenant_id: 'default',
    query: queryText(i),
    session_id: null,
    profiles: null,
    top_k: 10,
    require_all: false,
    deadline: new Date(now + deadlineMs).toISOString(),
    traceparent: `00-${hex(32)}-${hex(16)}-01`,
    steps: [{ agent: 'ingress', at: new Date(now).toISOString() }],
  };
}

/** Random hex digits; Math.random is enough for a trace id in a benchmark and far cheaper than crypto. */
function hex(digits: number): string {
  let s = '';
  while (s.length < digits) s += Math.floor(Math.random() * 2 ** 32).toString(16).padStart(8, '0');
  return s.slice(0, digits);
}

// Fixed role-shaped data, so the baseline's messages grow along the chain roughly like Chorus's do.
const FIXED_RESULTS = Array.from({ length: 10 }, (_, i) => ({ id: `docs/architecture.md#section-${i + 1}`, score: Number((0.033 - i * 0.001).toFixed(4)) }));
const ROLE_FIELDS: Record<AgentHop, (m: BenchMessage) => void> = {
  intent: (m) => (m.classification = { intent: 'question', complexity: 'simple', confidence: 0.8 }),
  planner: (m) => (m.plan = { route: 'PARALLEL', profiles: ['bm25', 'trigram'], rrf_k: 60 }),
  search: (m) => (m.results = FIXED_RESULTS),
  responder: (m) => (m.answer = { text: 'A fixed answer: the baseline searches nothing.', citations: [1, 2] }),
};

/** What a baseline hop does to the parsed message (in place), which it then forwards. */
export type HopStep = (m: BenchMessage, hop: AgentHop) => BenchMessage;

/** The work a baseline's hops do: `trivial` ({@link applyHop}) or `app` (Chorus's own, app-work.ts). */
export type HopWork = 'trivial' | 'app';

/** What one baseline hop does to the parsed message (in place): a step record and its field. */
export function applyHop(m: BenchMessage, hop: AgentHop): BenchMessage {
  m.steps.push({ agent: hop, at: new Date().toISOString() });
  ROLE_FIELDS[hop](m);
  return m;
}
