import { CUT_MARK, SNIPPETS_CUT, fitRecord } from './record-fit';
import type { WorkflowRecord } from './workflow.record';

const size = (r: unknown) => new TextEncoder().encode(JSON.stringify(r)).length;

function record(query: string, results: number, snippet: string): WorkflowRecord {
  return {
    correlation_id: 'c1',
    tenant_id: 'default',
    query,
    session_id: null,
    status: 'completed',
    degraded: false,
    degradations: [],
    started_at: '2026-12-02T00:00:00.000Z',
    updated_at: '2026-12-02T00:00:01.000Z',
    finished_at: '2026-12-02T00:00:01.000Z',
    deadline: '2026-12-02T00:00:10.000Z',
    agents_involved: ['intent'],
    steps: [],
    next_steps: [],
    errors: [{ agent: 'intent', step: 'query', at: '2026-12-02T00:00:01.000Z', error_type: 'X', error_message: 'why '.repeat(200), retry_possible: false }],
    duplicates_dropped: 0,
    late_envelopes: 0,
    result: {
      query,
      answer: 'an answer',
      results: Array.from({ length: results }, (_, i) => ({ rank: i + 1, id: `d${i}`, title: `t${i}`, snippet, score: 1 / (i + 1), ranks: { bm25: i + 1 } })),
      provenance: { sources: [], profiles_used: ['bm25'], degraded: [], fusion: { k: 60, rank_window: 100 }, method: 'extractive' },
    },
    retry_of: null,
    retried_as: null,
    seen: { 'c1.query.api': 1 },
    times: {},
  } as WorkflowRecord;
}

describe('fitRecord', () => {
  it('fitRecord - a record that fits is kept as it is', () => {
    const r = record('what is the hub', 3, 'a snippet');
    expect(fitRecord(r, size(r))).toBe(r);
  });

  it('fitRecord - the snippets go first: the query, the ids and the bookkeeping stay whole', () => {
    const r = record('what is the hub', 100, 'a snippet of the document '.repeat(10));
    const fitted = fitRecord(r, size(r) - 1)!;
    expect(fitted.result!.results.every((x) => x.snippet === '')).toBe(true);
    expect(fitted.result!.answer).toBe(`an answer${SNIPPETS_CUT}`);
    expect(fitted.result!.results.map((x) => x.id)).toEqual(r.result!.results.map((x) => x.id));
    expect({ query: fitted.query, seen: fitted.seen, status: fitted.status }).toEqual({ query: r.query, seen: r.seen, status: r.status });
  });

  it('fitRecord - then the query is cut, by characters (an emoji is never split), and marked', () => {
    const query = `hub ${'😀'.repeat(3000)}`;
    const r = record(query, 1, '');
    const fitted = fitRecord(r, 6000)!;
    expect(size(fitted)).toBeLessThanOrEqual(6000);
    expect(fitted.query!.endsWith(CUT_MARK)).toBe(true);
    const kept = fitted.query!.slice(0, -CUT_MARK.length);
    expect(Array.from(kept)).toHaveLength(500);
    expect(query.startsWith(kept)).toBe(true);
    expect(fitted.result!.query).toBe(fitted.query);
  });

  it('fitRecord - null when no shrink makes it fit', () => {
    expect(fitRecord(record('q', 1, ''), 200)).toBeNull();
  });
});
