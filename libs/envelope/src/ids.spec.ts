import { correlationIdForIdempotencyKey, createCorrelationId, queryRequestDifferences } from './correlation-id';
import { idempotencyKey } from './idempotency';
import { CORRELATION_ID_PATTERN } from './patterns';
import { deadLetterSubject, parseWorkflowSubject, workflowFilter, workflowSubject } from './subjects';

describe('idempotencyKey', () => {
  it('idempotencyKey - is <correlation_id>.<message_type>.<agent>[.<part>]', () => {
    expect(idempotencyKey('wf-1', 'classification_result', 'intent')).toBe('wf-1.classification_result.intent');
    expect(idempotencyKey('wf-1', 'status_update', 'hub', 'completed')).toBe('wf-1.status_update.hub.completed');
  });

  it('idempotencyKey - is the same for a retry of the same step', () => {
    expect(idempotencyKey('wf-1', 'tool_results', 'search')).toBe(idempotencyKey('wf-1', 'tool_results', 'search'));
  });

  it('idempotencyKey - rejects a part that is not subject-safe', () => {
    expect(() => idempotencyKey('wf-1', 'query', 'ingress', 'a.b')).toThrow(RangeError);
  });
});

describe('createCorrelationId', () => {
  const secret = 'test-secret';

  it('createCorrelationId - uuidv7 by default: unique and subject-safe', () => {
    const a = createCorrelationId({ tenant_id: 't', query: 'q' }, { strategy: 'uuidv7', secret });
    const b = createCorrelationId({ tenant_id: 't', query: 'q' }, { strategy: 'uuidv7', secret });
    expect(a).not.toBe(b);
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-/);
    expect(a).toMatch(CORRELATION_ID_PATTERN);
  });

  it('createCorrelationId - session: the same session and query in the same second collapse', () => {
    const now = () => 1_700_000_000_500;
    const a = createCorrelationId({ tenant_id: 't', query: 'hello', session_id: 's1' }, { strategy: 'session', secret, now });
    const b = createCorrelationId({ tenant_id: 't', query: 'hello ', session_id: 's1' }, { strategy: 'session', secret, now });
    const c = createCorrelationId({ tenant_id: 't', query: 'hello', session_id: 's1' }, { strategy: 'session', secret, now: () => 1_700_000_001_000 });
    const d = createCorrelationId({ tenant_id: 't', query: 'other', session_id: 's1' }, { strategy: 'session', secret, now });
    expect(a).toBe(b);
    expect(a).toMatch(/^s1_[0-9a-f]{8}_1700000000$/);
    expect(c).not.toBe(a);
    expect(d).not.toBe(a);
  });

  it('createCorrelationId - session: only the same request collapses (tenant, profiles as a set, top_k, require_all), whatever else', () => {
    const now = () => 1_700_000_000_500;
    const id = (input: Partial<Parameters<typeof createCorrelationId>[0]>) =>
      createCorrelationId({ tenant_id: 't', query: 'hello', session_id: 's1', profiles: ['bm25', 'trigram'], top_k: 5, require_all: false, ...input }, { strategy: 'session', secret, now });
    const base = id({});
    expect(id({ profiles: ['trigram', 'bm25', 'bm25'] })).toBe(base);
    expect(id({ profiles: [] })).toBe(id({ profiles: null }));
    for (const other of [{ tenant_id: 'u' }, { profiles: ['bm25'] }, { top_k: 7 }, { require_all: true }]) expect(id(other)).not.toBe(base);
  });

  it('createCorrelationId - session hash is keyed: another secret gives another id', () => {
    const now = () => 1_700_000_000_000;
    const a = createCorrelationId({ tenant_id: 't', query: 'hello', session_id: 's1' }, { strategy: 'session', secret: 'one', now });
    const b = createCorrelationId({ tenant_id: 't', query: 'hello', session_id: 's1' }, { strategy: 'session', secret: 'two', now });
    expect(a).not.toBe(b);
  });

  it('queryRequestDifferences - compares as the session strategy does: query trimmed, profiles as a set, top_k only when asked', () => {
    const base = { query: 'hello', session_id: null, profiles: ['bm25', 'trigram'], top_k: 5, require_all: false };
    expect(queryRequestDifferences(base, { ...base, query: ' hello ', profiles: ['trigram', 'bm25'] }, { compareTopK: true })).toEqual([]);
    expect(queryRequestDifferences({ ...base, profiles: [] }, { ...base, profiles: null }, { compareTopK: true })).toEqual([]);
    expect(queryRequestDifferences(base, { ...base, top_k: 7 }, { compareTopK: false })).toEqual([]);
    // A profile named "null" is a choice, not the planner's.
    expect(queryRequestDifferences({ ...base, profiles: ['null'] }, { ...base, profiles: null }, { compareTopK: true })).toEqual(['profiles']);
    expect(queryRequestDifferences(base, { query: 'other', session_id: 's', profiles: ['bm25'], top_k: 7, require_all: true }, { compareTopK: true })).toEqual([
      'query',
      'session_id',
      'profiles',
      'top_k',
      'require_all',
    ]);
    // What the session strategy collapses, the key check accepts, and the other way round.
    const now = () => 1_700_000_000_500;
    const id = (r: typeof base) => createCorrelationId({ tenant_id: 't', ...r, session_id: 's1' }, { strategy: 'session', secret, now });
    for (const other of [{ ...base, query: 'hello  ' }, { ...base, query: 'hullo' }, { ...base, profiles: ['bm25'] }, { ...base, require_all: true }]) {
      expect(id(other) === id(base)).toBe(queryRequestDifferences(base, other, { compareTopK: true }).length === 0);
    }
  });

  it('correlationIdForIdempotencyKey - the same key of the same tenant names the same workflow', () => {
    expect(correlationIdForIdempotencyKey('acme', 'k1')).toBe(correlationIdForIdempotencyKey('acme', 'k1'));
    expect(correlationIdForIdempotencyKey('acme', 'k1')).not.toBe(correlationIdForIdempotencyKey('other', 'k1'));
    expect(correlationIdForIdempotencyKey('acme', 'k1')).toMatch(CORRELATION_ID_PATTERN);
  });

  it('correlationIdForIdempotencyKey - refuses a key that HTTP would refuse: empty, too long, spaces, control characters', () => {
    for (const key of ['', 'k'.repeat(257), 'has spaces', 'tab\tkey', 'é']) {
      expect(() => correlationIdForIdempotencyKey('acme', key)).toThrow(/1 to 256 printable ASCII characters, no spaces/);
    }
    expect(correlationIdForIdempotencyKey('acme', 'k'.repeat(256))).toMatch(CORRELATION_ID_PATTERN);
  });
});

describe('subjects', () => {
  it('subjects - builds and parses workflow subjects', () => {
    const s = workflowSubject('acme', 'query', 'wf-1');
    expect(s).toBe('chorus.wf.acme.query.wf-1');
    expect(parseWorkflowSubject(s)).toEqual({ tenantId: 'acme', messageType: 'query', correlationId: 'wf-1' });
    expect(parseWorkflowSubject('chorus.wf.acme.nope.wf-1')).toBeNull();
    expect(workflowFilter({ correlationId: 'wf-1' })).toBe('chorus.wf.*.*.wf-1');
  });

  it('subjects - refuses tokens that would break the subject', () => {
    expect(() => workflowSubject('acme', 'query', 'a.b')).toThrow(RangeError);
    expect(() => workflowSubject('ac me', 'query', 'wf')).toThrow(RangeError);
  });

  it('subjects - dead-letter subjects take valid tokens from the source subject only', () => {
    expect(deadLetterSubject('chorus.wf.acme.query.wf-1')).toBe('chorus.dlq.acme.query');
    expect(deadLetterSubject('chorus.wf.ACME.bogus.wf-1')).toBe('chorus.dlq._invalid._invalid');
  });
});
