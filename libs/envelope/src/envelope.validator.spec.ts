import fc from 'fast-check';
import { createEnvelope, deriveEnvelope } from './envelope.factory';
import { explainEnvelope, parseEnvelope } from './envelope.parser';
import type { Envelope } from './envelope';
import type { MessageType } from './message-type';

const request = { query: 'how does chorus drop duplicates', top_k: 10, require_all: false };
const fusion = { k: 60, rank_window: 100 };
const PAYLOADS: Record<MessageType, object> = {
  query: request,
  classification_result: { request, search_text: 'q', intent: 'question', entities: [{ text: 'q', kind: 'quoted', start: 0, end: 1 }], modality: 'keyword', complexity: 'simple', confidence: 0.7, explicit_profiles: [], signals: ['s'] },
  execution_plan: { request, search_text: 'q', route: 'COMPLEX', profiles: [{ name: 'bm25', confidence: 0.8, reason: 'r' }], alternatives: [], top_k: 10, fusion, search_deadline: new Date().toISOString(), explanation: 'e' },
  tool_results: { request, search_text: 'q', results: [{ id: 'd1', title: 't', text: 'x', score: 0.03, ranks: { bm25: 1 } }], profiles_used: ['bm25'], degraded: [{ profile: 'trigram', reason: 'timeout', detail: 'slow' }], fusion, took_ms: 3 },
  response: { query: 'q', answer: 'a', results: [{ rank: 1, id: 'd1', title: 't', snippet: 's', score: 0.03, ranks: { bm25: 1 } }], provenance: { sources: [{ sentence: 's', document_id: 'd1', result_rank: 1 }], profiles_used: ['bm25'], degraded: [], fusion, method: 'extractive' } },
  status_update: { workflow_status: 'failed', previous_status: 'running', step: 'query', reason: 'r', error: { error_type: 'BOOM', error_message: 'm', retry_possible: false } },
  orchestration_command: { command: 'cancel', reason: 'r' },
};

function valid(type: MessageType): Envelope {
  const parent = createEnvelope({ messageType: 'query', correlationId: 'wf-1', tenantId: 'acme', agent: 'ingress', deadline: new Date(Date.now() + 10_000), payload: request as never });
  return JSON.parse(JSON.stringify(type === 'query' ? parent : deriveEnvelope(parent, { messageType: type, agent: 'agent-x', payload: PAYLOADS[type] as never })));
}

/**
 * Date-times on which a format check and Date.parse disagree: a day past the month's end (Date.parse
 * rolls it over), a leap second or a bare-hour offset (Date.parse cannot read them), a space for
 * the T or an offset without its colon (RFC 3339 appendix forms), and a few that are fine.
 */
const DATE_TIME_EDGES = [
  '2026-02-30T00:00:00Z',
  '2026-04-31T12:00:00.000Z',
  '2025-02-29T00:00:00Z',
  '2024-02-29T00:00:00Z',
  '2026-06-30T23:59:60Z',
  '2026-11-30T10:30:00+01',
  '2026-11-30T10:30:00+0100',
  '2026-11-30 10:30:00Z',
  '2026-11-30t10:30:00z',
  '2026-11-30T24:00:00Z',
  '2026-11-30T10:30:00+24:00',
  '2026-11-30T10:30:00.123456789-05:30',
];

/** Walks to a random path of a JSON value and replaces or removes what is there. */
const mutation = fc.record({
  pick: fc.nat(),
  action: fc.constantFrom('delete', 'replace'),
  with: fc.oneof(
    fc.constant(null),
    fc.constant(''),
    fc.constant(' '),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.string(),
    fc.constant([]),
    fc.constant({}),
    fc.constant('2026-11-30'),
    fc.constantFrom(...DATE_TIME_EDGES),
    fc.constant('x'.repeat(9000)),
    fc.constant('01a22bd4-cfaa-46b2-8a7a-72cab3578ea8'),
  ),
});

function mutate(value: unknown, m: { pick: number; action: string; with: unknown }): unknown {
  const copy = JSON.parse(JSON.stringify(value));
  const paths: Array<Array<string | number>> = [];
  const walk = (v: unknown, path: Array<string | number>) => {
    if (path.length > 0) paths.push(path);
    if (v && typeof v === 'object') for (const [k, child] of Object.entries(v)) walk(child, [...path, Array.isArray(v) ? Number(k) : k]);
  };
  walk(copy, []);
  const path = paths[m.pick % paths.length];
  let parent: any = copy;
  for (const key of path.slice(0, -1)) parent = parent[key];
  const last = path[path.length - 1];
  if (m.action === 'delete' && !Array.isArray(parent)) delete parent[last];
  else parent[last] = m.with;
  return copy;
}

describe('envelope validator', () => {
  it('envelope validator - accepts a valid envelope of every message type', () => {
    for (const type of Object.keys(PAYLOADS) as MessageType[]) {
      const env = valid(type);
      expect(explainEnvelope(env)).toEqual([]);
      expect(parseEnvelope(env).ok).toBe(true);
    }
  });

  it('envelope validator - the compiled schema and the class-validator rules agree on mutated envelopes', () => {
    fc.assert(
      fc.property(fc.constantFrom(...(Object.keys(PAYLOADS) as MessageType[])), mutation, (type, m) => {
        const input = mutate(valid(type), m);
        const canonical = explainEnvelope(input).length === 0;
        expect(parseEnvelope(input).ok).toBe(canonical);
      }),
      { numRuns: 2000 },
    );
  });

  it('envelope validator - a date-time is valid to both paths or to neither, and a valid one is one Date.parse reads', () => {
    for (const value of DATE_TIME_EDGES) {
      for (const field of ['deadline', 'timestamp'] as const) {
        const input = { ...valid('query'), [field]: value };
        const canonical = explainEnvelope(input);
        const parsed = parseEnvelope(input);
        expect({ value, field, ok: parsed.ok }).toEqual({ value, field, ok: canonical.length === 0 });
        if (parsed.ok) expect(Number.isFinite(Date.parse(value))).toBe(true);
        else expect(canonical.map((e) => e.field)).toEqual([field]);
      }
    }
    const accepted = DATE_TIME_EDGES.filter((value) => parseEnvelope({ ...valid('query'), deadline: value }).ok);
    expect(accepted).toEqual(['2024-02-29T00:00:00Z', '2026-11-30t10:30:00z', '2026-11-30T10:30:00.123456789-05:30']);
  });

  it('envelope validator - a rejection lists every invalid field, whichever path found it', () => {
    const env = { ...valid('tool_results'), attempt: 0, status: 'error' } as Record<string, unknown>;
    const r = parseEnvelope(env);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.errors.map((e) => e.field)).toEqual(expect.arrayContaining(['attempt', 'error_details']));
  });
});
