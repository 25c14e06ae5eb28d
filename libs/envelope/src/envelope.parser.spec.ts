import fc from 'fast-check';
import { createEnvelope, deriveEnvelope } from './envelope.factory';
import { parseEnvelope } from './envelope.parser';
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
