import fc from 'fast-check';
import { createEnvelope, deriveEnvelope } from './envelope.factory';
import { explainEnvelope, parseEnvelope } from './envelope.parser';
import type { Envelope } from './envelope';

function validQuery(): Envelope<'query'> {
  return createEnvelope({
    messageType: 'query',
    correlationId: 'wf-1',
    tenantId: 'acme',
    agent: 'ingress',
    deadline: new Date(Date.now() + 10_000),
    payload: { query: 'how does chorus drop duplicates', top_k: 10, require_all: false },
  });
}

function fields(result: ReturnType<typeof parseEnvelope>): string[] {
  return result.ok ? [] : result.error.errors.map((e) => e.field);
}

describe('parseEnvelope', () => {
  it('parseEnvelope - accepts a valid envelope from bytes, a string or an object', () => {
    const env = validQuery();
    const json = JSON.stringify(env);
    for (const input of [new TextEncoder().encode(json), json, JSON.parse(json)]) {
      const r = parseEnvelope(input, { subject: 'chorus.wf.acme.query.wf-1' });
      expect(r.ok).toBe(true);
      if (r.ok) expect(r.value.payload).toEqual(expect.objectContaining({ query: 'how does chorus drop duplicates' }));
    }
  });

  it('parseEnvelope - lists every invalid field at once, payload fields included', () => {
    const env = { ...validQuery(), message_id: 'nope', tenant_id: 'Acme!', attempt: 0, payload: { query: '', top_k: 500, require_all: 'yes' } };
    expect(fields(parseEnvelope(env))).toEqual(
      expect.arrayContaining(['message_id', 'tenant_id', 'attempt', 'payload.query', 'payload.top_k', 'payload.require_all']),
    );
  });

  it('parseEnvelope - says "is required" once for a missing field', () => {
    const { deadline: _d, ...rest } = validQuery();
    const r = parseEnvelope(rest);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.errors).toContainEqual({ field: 'deadline', messages: ['deadline is required'] });
  });

  it('parseEnvelope - rejects a body that is not JSON or not an object', () => {
    expect(fields(parseEnvelope('{oops'))).toEqual(['$']);
    expect(fields(parseEnvelope('[1,2]'))).toEqual(['$']);
    expect(fields(parseEnvelope(new Uint8Array([0xff, 0xfe])))).toEqual(['$']);
  });

  it('parseEnvelope - requires error_details when status is error', () => {
    const env = { ...validQuery(), status: 'error' };
    expect(fields(parseEnvelope(env))).toContain('error_details');
    const ok = { ...env, error_details: { error_type: 'BOOM', error_message: 'it broke', retry_possible: false } };
    expect(parseEnvelope(ok).ok).toBe(true);
  });

  it('parseEnvelope - checks the body against the subject it arrived on', () => {
    const r = parseEnvelope(validQuery(), { subject: 'chorus.wf.other.response.wf-2' });
    expect(fields(r)).toEqual(expect.arrayContaining(['tenant_id', 'message_type', 'correlation_id']));
  });

  it('parseEnvelope - validates the payload for its message type', () => {
    const parent = validQuery();
    const plan = deriveEnvelope(parent, {
      messageType: 'execution_plan',
      agent: 'planner',
      payload: { route: 'SIDEWAYS' } as never,
    });
    expect(fields(parseEnvelope(plan))).toEqual(expect.arrayContaining(['payload.route', 'payload.request', 'payload.profiles', 'payload.search_deadline']));
  });

  it('parseEnvelope - never throws and rejects arbitrary JSON values', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const r = parseEnvelope(JSON.stringify(value));
        expect(r.ok).toBe(false);
      }),
    );
  });

  it('parseEnvelope - rejects any single field of a valid envelope replaced by a wrong type', () => {
    const keys = ['message_id', 'correlation_id', 'tenant_id', 'agent', 'message_type', 'status', 'timestamp', 'deadline', 'attempt', 'payload', 'next_steps', 'schema_version'] as const;
    fc.assert(
      fc.property(fc.constantFrom(...keys), fc.oneof(fc.integer({ min: 101 }), fc.constant(null), fc.constant(''), fc.constant([]), fc.constant(true)), (key, bad) => {
        fc.pre(!(key === 'next_steps' && Array.isArray(bad)));
        const env = { ...validQuery(), [key]: bad };
        const r = parseEnvelope(JSON.parse(JSON.stringify(env)));
        expect(r.ok).toBe(false);
        expect(fields(r)).toContain(key);
      }),
    );
  });
});

describe('deriveEnvelope', () => {
  it('deriveEnvelope - keeps the correlation id, tenant, deadline and trace; points causation at the parent', () => {
    const parent = validQuery();
    const child = deriveEnvelope(parent, {
      messageType: 'orchestration_command',
      agent: 'ingress',
      payload: { command: 'cancel' },
    });
    expect(child.correlation_id).toBe(parent.correlation_id);
    expect(child.tenant_id).toBe(parent.tenant_id);
    expect(child.deadline).toBe(parent.deadline);
    expect(child.causation_id).toBe(parent.message_id);
    expect(child.message_id).not.toBe(parent.message_id);
    expect(child.traceparent?.split('-')[1]).toBe(parent.traceparent?.split('-')[1]);
    expect(child.traceparent?.split('-')[2]).not.toBe(parent.traceparent?.split('-')[2]);
    expect(parseEnvelope(child).ok).toBe(true);
  });
});

describe('parseEnvelope - hostile input', () => {
  const json = (env: unknown) => JSON.stringify(env);

  it('parseEnvelope - a field nested thousands of levels deep is an error naming it, not a stack overflow', () => {
    const nested = (depth: number) => `${'['.repeat(depth)}1${']'.repeat(depth)}`;
    const cases: Array<[string, string]> = [
      ['next_steps', json(validQuery()).replace('"next_steps":[]', `"next_steps":${nested(4000)}`)],
      ['attempt', json(validQuery()).replace('"attempt":1', `"attempt":${nested(100_000)}`)],
      ['payload.deep', json(validQuery()).replace('"payload":{', `"payload":{"deep":${nested(6000)},`)],
    ];
    for (const [field, text] of cases) {
      const r = parseEnvelope(text);
      expect(r.ok).toBe(false);
      expect(fields(r).some((f) => f === field || f.startsWith(`${field}.`))).toBe(true);
      expect(explainEnvelope(JSON.parse(text)).length).toBeGreaterThan(0);
    }
  });

  it('parseEnvelope - an own constructor, __proto__ or prototype key is rejected by name, whichever validator looks', () => {
    for (const key of ['constructor', '__proto__', 'prototype']) {
      const valid = json(validQuery()).replace('"payload":{', `"payload":{"${key}":1,`);
      expect(fields(parseEnvelope(valid))).toEqual([`payload.${key}`]);
      // With another error too: class-transformer would throw on the key; the other field is still named.
      const both = valid.replace('"top_k":10', '"top_k":0');
      expect(fields(parseEnvelope(both))).toEqual(expect.arrayContaining([`payload.${key}`, 'payload.top_k']));
    }
    // A field offered only through __proto__ is missing.
    const hidden = json(validQuery()).replace('"status":"success",', '"__proto__":{"status":"success"},');
    expect(fields(parseEnvelope(hidden))).toEqual(expect.arrayContaining(['__proto__', 'status']));
  });

  it('parseEnvelope - thousands of invalid items give a bounded rejection, quickly', () => {
    const parent = validQuery();
    const response = deriveEnvelope(parent, {
      messageType: 'response',
      agent: 'responder',
      payload: { query: 'q', answer: 'a', results: [], provenance: { sources: Array.from({ length: 20_000 }, () => ({})), profiles_used: [], degraded: [], fusion: { k: 60, rank_window: 100 }, method: 'm' } } as never,
    });
    const started = Date.now();
    const r = parseEnvelope(json(response));
    const took = Date.now() - started;
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.errors.length).toBeLessThanOrEqual(51);
    // The array is too long (sources hold at most 100), and its items are named too, up to the bound.
    expect(r.error.errors[0].field).toBe('payload.provenance.sources');
    expect(r.error.errors[1].field).toMatch(/^payload\.provenance\.sources\.0\./);
    expect(r.error.errors[r.error.errors.length - 1]).toEqual({ field: '$', messages: [expect.stringMatching(/^\d+ more invalid fields not listed$/)] });
    expect(json(r.error.errors).length).toBeLessThan(20_000);
    expect(took).toBeLessThan(5000); // about 20x the unclipped cost on a loaded machine; the real cost is ~100-300 ms
  });

  it('parseEnvelope - fusion weights must be finite numbers from 0 to 1000', () => {
    const plan = (weights: unknown) =>
      deriveEnvelope(validQuery(), {
        messageType: 'execution_plan',
        agent: 'planner',
        payload: { request: { query: 'q', top_k: 10, require_all: false }, search_text: 'q', route: 'COMPLEX', profiles: [], alternatives: [], top_k: 10, fusion: { k: 60, rank_window: 100, weights }, search_deadline: new Date().toISOString(), explanation: 'e' } as never,
      });
    expect(parseEnvelope(json(plan({ bm25: 0, trigram: 2.5 }))).ok).toBe(true);
    for (const bad of [{ bm25: -1 }, { bm25: 1001 }, { bm25: 'x' }, { bm25: null }]) {
      expect(fields(parseEnvelope(json(plan(bad))))).toEqual(['payload.fusion.weights']);
      expect(explainEnvelope(JSON.parse(json(plan(bad)))).map((e) => e.field)).toEqual(['payload.fusion.weights']);
    }
    const overflow = fields(parseEnvelope(json(plan({ bm25: 1 })).replace('"bm25":1', '"bm25":1e999')));
    expect(overflow).toContain('payload.fusion.weights.bm25');
    expect(overflow.every((f) => f.startsWith('payload.fusion.weights'))).toBe(true);
  });

  it('parseEnvelope - a number too large for a double (1e999 parses as Infinity) is named, wherever the schema has no bound for it', () => {
    const parent = validQuery();
    const tools = JSON.stringify(
      deriveEnvelope(parent, {
        messageType: 'tool_results',
        agent: 'search',
        payload: { request: { query: 'q', top_k: 10, require_all: false }, search_text: 'q', results: [], profiles_used: [], degraded: [], fusion: { k: 60, rank_window: 100 }, took_ms: 1 } as never,
      }),
    );
    for (const raw of ['1e999', '-1e999']) {
      const r = parseEnvelope(tools.replace('"took_ms":1', `"took_ms":${raw}`));
      expect(fields(r)).toEqual(['payload.took_ms']);
      if (!r.ok) expect(r.error.errors[0].messages[0]).toMatch(/finite/);
    }
  });
});

describe('parseEnvelope - long arrays', () => {
  it('parseEnvelope - an array over its limit is named even when only its first items are explained', () => {
    const parent = validQuery();
    const result = { id: 'd', title: 't', text: 'x', score: 0.1, ranks: { bm25: 1 } };
    const results = (n: number, bad?: number) => Array.from({ length: n }, (_, i) => (i === bad ? { ...result, score: -1 } : result));
    const tools = (n: number, bad?: number) =>
      JSON.stringify(
        deriveEnvelope(parent, {
          messageType: 'tool_results',
          agent: 'search',
          payload: { request: { query: 'q', top_k: 10, require_all: false }, search_text: 'q', results: results(n, bad), profiles_used: [], degraded: [], fusion: { k: 60, rank_window: 100 }, took_ms: 1 } as never,
        }),
      );
    expect(parseEnvelope(tools(1000)).ok).toBe(true);
    expect(fields(parseEnvelope(tools(1500, 5)))).toEqual(['payload.results.5.score', 'payload.results']);
    expect(fields(parseEnvelope(tools(1500)))).toEqual(['payload.results']);
    expect(fields(parseEnvelope(tools(900, 800)))).toEqual(['payload.results.800.score']);
  });
});
