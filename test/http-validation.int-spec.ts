import { request } from 'node:http';
import { getJson, postJson, startChorusFixture, type ChorusFixture } from './chorus.fixture';

/** A POST with no body at all: no Content-Length, no Transfer-Encoding (as `curl -XPOST url` sends it). */
function postWithoutBody(url: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST' }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null }));
    });
    req.on('error', reject);
    req.removeHeader('content-length');
    req.removeHeader('transfer-encoding');
    req.end();
  });
}

// One Chorus for both groups: every assertion about counts compares before and after.
let f: ChorusFixture;

beforeAll(async () => {
  f = await startChorusFixture();
});
afterAll(async () => {
  await f?.stop();
});

const fieldsOf = (body: { errors?: Array<{ field: string }> }) => (body.errors ?? []).map((e) => e.field);

describe('POST /v1/queries - bad bodies', () => {

  it('POST /v1/queries - 400 naming query when it is missing', async () => {
    const r = await postJson(`${f.url}/v1/queries`, { tenant_id: 'acme' });
    expect(r.status).toBe(400);
    expect(r.body.errors).toContainEqual({ field: 'query', messages: ['query is required'] });
  });

  it('POST /v1/queries - 400 naming query when it is empty or blank', async () => {
    for (const query of ['', '   ']) {
      const r = await postJson(`${f.url}/v1/queries`, { query });
      expect(r.status).toBe(400);
      expect(fieldsOf(r.body)).toEqual(['query']);
    }
  });

  it('POST /v1/queries - 400 naming tenant_id when it is not a valid tenant id', async () => {
    const r = await postJson(`${f.url}/v1/queries`, { query: 'hello', tenant_id: 'Bad Tenant!' });
    expect(r.status).toBe(400);
    expect(fieldsOf(r.body)).toEqual(['tenant_id']);
  });

  it('POST /v1/queries - 400 naming every invalid field at once, unknown fields included', async () => {
    const r = await postJson(`${f.url}/v1/queries`, { query: '', tenant_id: 'X', top_k: 0, deadline_ms: 5, require_all: 'yes', profiles: ['BM25'], colour: 'red' });
    expect(r.status).toBe(400);
    expect(fieldsOf(r.body).sort()).toEqual(['colour', 'deadline_ms', 'profiles', 'query', 'require_all', 'tenant_id', 'top_k']);
  });

  it('POST /v1/queries - a value of the wrong type is told its type once, not every rule it could not meet', async () => {
    const r = await postJson(`${f.url}/v1/queries`, { query: 42, top_k: '5', deadline_ms: true, require_all: 'yes' });
    expect({ status: r.status, errors: r.body.errors }).toEqual({
      status: 400,
      errors: [
        { field: 'query', messages: ['query must be a string'] },
        { field: 'top_k', messages: ['top_k must be an integer number'] },
        { field: 'deadline_ms', messages: ['deadline_ms must be an integer number'] },
        { field: 'require_all', messages: ['require_all must be a boolean value'] },
      ],
    });
    // A value of the right type still hears every rule it breaks.
    const list = await postJson(`${f.url}/v1/queries`, { query: ['a'], profiles: ['BM25', 5] });
    expect(list.body.errors).toEqual([
      { field: 'query', messages: ['query must be a string'] },
      { field: 'profiles', messages: ['each profile must match [a-z][a-z0-9_-]{0,31}', 'each value in profiles must be a string'] },
    ]);
    const fraction = await postJson(`${f.url}/v1/queries`, { query: 'x', top_k: 100.5 });
    expect(fraction.body.errors).toEqual([{ field: 'top_k', messages: ['top_k must not be greater than 100', 'top_k must be an integer number'] }]);
    const empty = await postJson(`${f.url}/v1/queries`, { query: '' });
    expect(empty.body.errors).toEqual([{ field: 'query', messages: ['query must contain a character other than spaces, control characters and invisible ones', 'query should not be empty'] }]);
    // Zero-width space, a direction mark and an override; control characters (NUL, BEL, ESC, DEL, a C1 one): nothing to search for.
    for (const query of [' \u200b\u200f\u202e ', '\u061c\u2066\u2069', '\u034f\u3164\u115f\u1160\uffa0', '\ufe0f\u180b\u17b4', '\u0000', '\u0001\u0007\u001b \u007f\u0085']) {
      const invisible = await postJson(`${f.url}/v1/queries`, { query });
      expect({ query, errors: invisible.body.errors }).toEqual({ query, errors: [{ field: 'query', messages: ['query must contain a character other than spaces, control characters and invisible ones'] }] });
    }
    expect((await postJson(`${f.url}/v1/queries?wait=true`, { query: '\u200bjetstream\u200d' })).status).toBe(200);
  });

  it('POST /v1/queries - 400 naming query when it is longer than the limit', async () => {
    const r = await postJson(`${f.url}/v1/queries`, { query: 'x'.repeat(4001) });
    expect(r.status).toBe(400);
    expect(r.body.errors[0].field).toBe('query');
    expect(r.body.errors[0].messages[0]).toMatch(/4000/);
    // Counted by code point, as the envelope's schema and the profiles count: a variation selector
    // (the second half of ❤️) counts, an emoji's two UTF-16 units count once.
    const hearts = await postJson(`${f.url}/v1/queries`, { query: `hub ${'❤️'.repeat(2000)}` });
    expect({ status: hearts.status, errors: hearts.body.errors }).toEqual({ status: 400, errors: [{ field: 'query', messages: ['query must be shorter than or equal to 4000 characters'] }] });
    expect((await postJson(`${f.url}/v1/queries`, { query: `hub ${'😀'.repeat(3996)}` })).status).toBe(202);
  });

  it('POST /v1/queries - 413 for a body larger than the limit, with the limit in the message', async () => {
    const r = await postJson(`${f.url}/v1/queries`, { query: 'x', padding: 'y'.repeat(70 * 1024) });
    expect(r.status).toBe(413);
    expect(r.body.message).toMatch(/65536 bytes/);
  });

  it('POST /v1/queries - 400 for a body that is not valid JSON or not an object', async () => {
    const broken = await postJson(`${f.url}/v1/queries`, '{"query": ');
    expect(broken.status).toBe(400);
    expect(broken.body.message).toMatch(/not valid JSON/);
    const array = await postJson(`${f.url}/v1/queries`, '[1, 2]');
    expect(array.status).toBe(400);
    expect(array.body.errors).toContainEqual({ field: '$', messages: ['body must be a JSON object'] });
    // Valid JSON, but not an object: not called invalid JSON.
    for (const body of ['null', '"text"', '42']) {
      const r = await postJson(`${f.url}/v1/queries`, body);
      expect({ body, status: r.status, message: r.body.message, errors: r.body.errors }).toEqual({
        body,
        status: 400,
        message: 'invalid request body',
        errors: [{ field: '$', messages: ['body must be a JSON object'] }],
      });
    }
    const twice = await postJson(`${f.url}/v1/queries`, { query: 'x', profiles: ['bm25', 'bm25'] });
    expect(twice.body.errors).toEqual([{ field: 'profiles', messages: ['profiles must not name a profile twice'] }]);
  });

  it('POST /v1/queries - 415 for a body that is not JSON', async () => {
    const res = await fetch(`${f.url}/v1/queries`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hello' });
    expect(res.status).toBe(415);
  });

  it('POST /v1/queries and /a2a - a body that is not UTF-8 is refused (400; JSON-RPC parse error), not read with U+FFFD in place of its bytes', async () => {
    const bytes = Buffer.concat([Buffer.from('{"query":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    const res = await fetch(`${f.url}/v1/queries`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: bytes });
    expect({ status: res.status, body: await res.json() }).toEqual({
      status: 400,
      body: expect.objectContaining({ message: 'the request body is not valid UTF-8', errors: [{ field: '$', messages: ['body must be UTF-8 (RFC 8259)'] }] }),
    });
    const rpc = Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}}')]);
    const a2a = await fetch(`${f.url}/a2a`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: rpc });
    expect(await a2a.json()).toMatchObject({ error: { code: -32700, message: 'Invalid JSON payload: the body is not valid UTF-8.' } });
    // utf8 is UTF-8 by another name: accepted (the JSON parser knew only utf-8, and answered 415).
    const utf8 = await fetch(`${f.url}/v1/queries`, { method: 'POST', headers: { 'content-type': 'application/json; charset=UTF8' }, body: '{"query":"what is the correlation hub"}' });
    expect(utf8.status).toBe(202);
    // Another charset, even one JSON parsers know, is the wrong media type (415), not bad JSON.
    const utf16 = await fetch(`${f.url}/v1/queries`, { method: 'POST', headers: { 'content-type': 'application/json; charset=utf-16' }, body: Buffer.from('{"query":"x"}', 'utf16le') });
    expect({ status: utf16.status, message: ((await utf16.json()) as { message: string }).message }).toEqual({ status: 415, message: 'the request body must be UTF-8 JSON, not utf-16 (Content-Type: application/json; charset=utf-8)' });
    // The same text, encoded right, is taken.
    expect((await postJson(`${f.url}/v1/queries?wait=true`, { query: 'caf\u00e9 \ufffd' })).status).toBe(200);
  });

  it('POST /v1/queries - 400 for a wait parameter that is not a boolean', async () => {
    const r = await postJson(`${f.url}/v1/queries?wait=maybe`, { query: 'hello' });
    expect(r.status).toBe(400);
    // Every value it takes, as README lists them.
    expect(r.body.errors).toEqual([{ field: 'wait', messages: ['wait must be true, 1 or empty (wait for the end), or false or 0 (answer at once)'] }]);
  });

  it('POST /v1/queries - 400 naming an unknown query parameter (a misspelt wait does not quietly answer 202), and nothing is published', async () => {
    const before = await f.chorus.bus.jsm.streams.info(f.config.bus.workflowStream);
    const r = await postJson(`${f.url}/v1/queries?wiat=true&top_k=3`, { query: 'hello' });
    expect({ status: r.status, message: r.body.message, fields: fieldsOf(r.body) }).toEqual({ status: 400, message: 'invalid query string', fields: ['wiat', 'top_k'] });
    expect(r.body.errors[0].messages[0]).toBe('unknown query parameter wiat: this route takes wait (everything else goes in the JSON body)');
    const after = await f.chorus.bus.jsm.streams.info(f.config.bus.workflowStream);
    expect(after.state.messages).toBe(before.state.messages);
  });

  it('POST /v1/queries - a bare ?wait waits, as a flag does (it answered 202 without waiting)', async () => {
    const r = await postJson(`${f.url}/v1/queries?wait`, { query: 'does a bare wait wait' });
    expect({ status: r.status, workflow: r.body.status }).toEqual({ status: 200, workflow: 'completed' });
  });

  it('POST /v1/queries - one 400 names the invalid body fields, the wait parameter and the Idempotency-Key header together', async () => {
    const res = await fetch(`${f.url}/v1/queries?wait=maybe`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'has spaces' },
      body: JSON.stringify({ query: '', top_k: 0 }),
    });
    const body = (await res.json()) as any;
    expect({ status: res.status, message: body.message, fields: fieldsOf(body).sort() }).toEqual({
      status: 400,
      message: 'invalid request',
      fields: ['Idempotency-Key', 'query', 'top_k', 'wait'],
    });
    // The deployment's deadline cap with the body's own rules.
    const capped = await postJson(`${f.url}/v1/queries`, { query: 'x', deadline_ms: 400_000, tenant_id: 'Bad' });
    expect({ status: capped.status, fields: fieldsOf(capped.body).sort() }).toEqual({ status: 400, fields: ['deadline_ms', 'tenant_id'] });
    const bodyOnly = await postJson(`${f.url}/v1/queries?wait=true`, { query: '' });
    expect({ status: bodyOnly.status, message: bodyOnly.body.message }).toEqual({ status: 400, message: 'invalid request body' });
  });

  it('POST /v1/queries - nothing is published for a rejected body, and the next good one still works', async () => {
    const before = await f.chorus.bus.jsm.streams.info(f.config.bus.workflowStream);
    await postJson(`${f.url}/v1/queries`, { query: '' });
    const after = await f.chorus.bus.jsm.streams.info(f.config.bus.workflowStream);
    expect(after.state.messages).toBe(before.state.messages);
    const ok = await postJson(`${f.url}/v1/queries?wait=true`, { query: 'what is an envelope' });
    expect(ok.status).toBe(200);
    expect(ok.body.status).toBe('completed');
  });
});

describe('HTTP - hostile input gets a 400 naming the field, never a 500', () => {
  const get = async (path: string) => {
    const res = await fetch(`${f.url}${path}`);
    return { status: res.status, body: (await res.json()) as any };
  };
  const responses = async (status: number) => {
    const text = await (await fetch(`${f.url}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(`chorus_http_responses_total{status="${status}"`));
    return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
  };

  it('POST /v1/queries - a body nested thousands of levels deep is a 400 naming where it is too deep', async () => {
    const deep = `${'['.repeat(2500)}1${']'.repeat(2500)}`;
    const r = await postJson(`${f.url}/v1/queries`, `{"query":"x","deep":${deep}}`);
    expect(r.status).toBe(400);
    expect(r.body.message).toBe('invalid request body');
    expect(fieldsOf(r.body)[0]).toMatch(/^deep(\.0)+$/);
    expect(r.body.errors[0].messages[0]).toMatch(/nests more than 64 levels/);
  });

  it('POST /v1/queries - own constructor and __proto__ keys are named like any unknown field, with the other invalid fields', async () => {
    const r = await postJson(`${f.url}/v1/queries`, '{"query":"x","constructor":{"name":"y"},"__proto__":{"top_k":5},"top_k":0}');
    expect(r.status).toBe(400);
    expect(fieldsOf(r.body).sort()).toEqual(['__proto__', 'constructor', 'top_k']);
  });

  it('POST /v1/queries - a number too large for a double (1e999) is a 400 naming it', async () => {
    const r = await postJson(`${f.url}/v1/queries`, '{"query":"x","top_k":1e999}');
    expect(r.status).toBe(400);
    expect(fieldsOf(r.body)).toEqual(['top_k']);
    expect(r.body.errors[0].messages[0]).toMatch(/finite/);
  });

  it('GET /v1/workflows - a cursor that is not a next_cursor, a date the hub cannot read or a limit that is not decimal is a 400 naming the filter', async () => {
    for (const [query, field] of [['cursor=W10', 'cursor'], ['cursor=bnVsbA', 'cursor'], ['since=2026-334', 'since'], ['until=20261130T103010Z', 'until'], ['since=2026-W48-1', 'since'], ['until=2026-11-30T10:30:10,5Z', 'until'], ['limit=0x10', 'limit'], ['limit=1e2', 'limit']]) {
      const r = await get(`/v1/workflows?${query}`);
      expect({ query, status: r.status, fields: fieldsOf(r.body), message: r.body.message }).toEqual({ query, status: 400, fields: [field], message: 'invalid query string' });
    }
    // One message for a limit that is not one, not one per rule it breaks.
    expect((await get('/v1/workflows?limit=abc')).body.errors).toEqual([{ field: 'limit', messages: ['limit must be an integer from 1 to 500'] }]);
    for (const query of ['limit=2', 'since=2026-11-30', 'until=2026-11-30T10:30:10.5%2B14:00', 'since=2026-01-01T00:00:00Z&until=2100-01-01T00:00:00.000Z']) {
      expect({ query, status: (await get(`/v1/workflows?${query}`)).status }).toEqual({ query, status: 200 });
    }
  });

  it('GET /v1/workflows - a parameter given twice is named as given twice, not as a wrong value', async () => {
    const res = await get('/v1/workflows?status=completed&status=failed&limit=5&limit=6&agent=intent');
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([
      { field: 'status', messages: ['status may be given once, not 2 times'] },
      { field: 'limit', messages: ['limit may be given once, not 2 times'] },
    ]);
  });

  it('tenant_id given twice on a workflow route or /v1/stats is named as given twice, not as a wrong value', async () => {
    for (const path of ['/v1/workflows/abc', '/v1/workflows/abc/history', '/v1/workflows/abc/events', '/v1/stats']) {
      const res = await get(`${path}?tenant_id=acme&tenant_id=other`);
      expect([path, res.status, res.body.errors]).toEqual([path, 400, [{ field: 'tenant_id', messages: ['tenant_id may be given once, not 2 times'] }]]);
    }
  });

  it('POST /v1/queries - wait given twice is named as given twice, not as a wrong value, and nothing starts', async () => {
    const before = (await get('/v1/workflows')).body.workflows.length;
    for (const query of ['wait=true&wait=false', 'wait=true&wait=true', 'wait&wait=1']) {
      const r = await postJson(`${f.url}/v1/queries?${query}`, { query: 'hello' });
      expect({ query, status: r.status, message: r.body.message, errors: r.body.errors }).toEqual({
        query,
        status: 400,
        message: 'invalid query string',
        errors: [{ field: 'wait', messages: ['wait may be given once, not 2 times'] }],
      });
    }
    // With the rest of the request's errors, in the one 400.
    const r = await postJson(`${f.url}/v1/queries?wait=1&wait=0&wiat=true`, { query: '' });
    expect(r.body.errors.map((e: { field: string }) => e.field)).toEqual(['query', 'wait', 'wiat']);
    expect((await get('/v1/workflows')).body.workflows.length).toBe(before);
  });

  it('tenant_id given twice on the cancel and the retry is named as given twice too', async () => {
    for (const path of ['/v1/workflows/abc/cancel', '/v1/workflows/abc/retry']) {
      const r = await postJson(`${f.url}${path}?tenant_id=acme&tenant_id=other`, {});
      expect([path, r.status, r.body.errors]).toEqual([path, 400, [{ field: 'tenant_id', messages: ['tenant_id may be given once, not 2 times'] }]]);
    }
  });

  it('GET /v1/workflows/:id - a path that is not valid percent-encoding is a 400 naming the path', async () => {
    for (const path of ['/v1/workflows/%ZZ', '/v1/workflows/a%E0%A4/history', '/v1/workflows/%/events']) {
      const res = await get(path);
      expect([path, res.status, res.body.errors?.[0]?.field]).toEqual([path, 400, 'path']);
    }
  });

  it('GET /v1/workflows - prototype keys in the query string are named as unknown filters', async () => {
    for (const key of ['__proto__', 'constructor', 'toString']) {
      const r = await get(`/v1/workflows?${key}=x`);
      expect({ key, status: r.status, fields: fieldsOf(r.body) }).toEqual({ key, status: 400, fields: [key] });
    }
  });

  it('GET /v1/workflows/:id/events - an invalid tenant_id is named, as on /v1/workflows/:id', async () => {
    for (const path of ['/v1/workflows/abc/events?tenant_id=%20', '/v1/workflows/abc?tenant_id=%20']) {
      const r = await get(path);
      expect({ path, status: r.status, fields: fieldsOf(r.body) }).toEqual({ path, status: 400, fields: ['tenant_id'] });
    }
  });

  it('HTTP - every answer is counted by status code in /metrics', async () => {
    const before = await responses(400);
    await get('/v1/workflows?cursor=W10');
    await postJson(`${f.url}/v1/queries`, { query: '' });
    expect((await responses(400)) - before).toBe(2);
  });
});

describe('requests without a body', () => {
  it('POST /v1/workflows/:id/cancel with no body at all is answered for the workflow (404 here), not 415; a non-JSON body still is 415', async () => {
    const none = await postWithoutBody(`${f.url}/v1/workflows/01a22d8c-c74d-773c-8da3-835b380903bd/cancel`);
    expect(none.status).toBe(404);
    const text = await fetch(`${f.url}/v1/workflows/01a22d8c-c74d-773c-8da3-835b380903bd/cancel`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'please' });
    expect(text.status).toBe(415);
    // A query with no body is a 400 naming query, not a 415.
    const query = await postWithoutBody(`${f.url}/v1/queries`);
    expect({ status: query.status, fields: fieldsOf(query.body) }).toEqual({ status: 400, fields: ['query'] });
  });
});

describe('unknown query parameters on the reads', () => {
  it('are a 400 naming them (a misspelt tenant_id does not quietly read across tenants), with the id and tenant_id errors in the same 400', async () => {
    const id = '01a22d8c-c74d-773c-8da3-835b380903bd';
    for (const path of [`/v1/workflows/${id}`, `/v1/workflows/${id}/history`, `/v1/workflows/${id}/events`, '/v1/stats']) {
      const r = await getJson(`${f.url}${path}?tennant_id=acme`);
      expect({ path, status: r.status, message: r.body.message, fields: fieldsOf(r.body) }).toEqual({ path, status: 400, message: 'invalid query string', fields: ['tennant_id'] });
      expect(r.body.errors[0].messages[0]).toBe('unknown query parameter tennant_id: this route takes tenant_id');
    }
    const list = await getJson(`${f.url}/v1/workflows?tennant_id=acme&limit=5`);
    expect({ status: list.status, errors: list.body.errors }).toEqual({
      status: 400,
      errors: [{ field: 'tennant_id', messages: ['unknown query parameter tennant_id: this route takes status, agent, since, until, limit, cursor, tenant_id'] }],
    });
    const agents = await getJson(`${f.url}/v1/agents?verbose=1`);
    expect({ status: agents.status, errors: agents.body.errors }).toEqual({ status: 400, errors: [{ field: 'verbose', messages: ['unknown query parameter verbose: this route takes none'] }] });
    const cancel = await postJson(`${f.url}/v1/workflows/${id}/cancel?force=1`, {});
    expect({ status: cancel.status, fields: fieldsOf(cancel.body) }).toEqual({ status: 400, fields: ['force'] });
    const all = await getJson(`${f.url}/v1/workflows/not%20an%20id?tenant_id=Bad&x=1`);
    expect({ status: all.status, message: all.body.message, fields: fieldsOf(all.body) }).toEqual({ status: 400, message: 'invalid request', fields: ['id', 'tenant_id', 'x'] });
    // The parameters they do take still work.
    expect((await getJson(`${f.url}/v1/workflows/${id}?tenant_id=acme`)).status).toBe(404);
    expect((await getJson(`${f.url}/v1/stats?tenant_id=acme`)).status).toBe(200);
  });
});

describe('a method a route does not take', () => {
  it('is a 405 naming the methods it takes (Allow header too); a path no route has is still a 404', async () => {
    const call = async (method: string, path: string) => {
      const res = await fetch(`${f.url}${path}`, { method, headers: { 'content-type': 'application/json' }, body: method === 'GET' ? undefined : '{}' });
      return { status: res.status, allow: res.headers.get('allow'), message: ((await res.json()) as any).message };
    };
    expect(await call('POST', '/v1/agents')).toEqual({ status: 405, allow: 'GET, HEAD', message: 'POST is not allowed on /v1/agents; it takes GET, HEAD' });
    expect(await call('DELETE', '/v1/workflows/01a22d8c-c74d-773c-8da3-835b380903bd')).toEqual(expect.objectContaining({ status: 405, allow: 'GET, HEAD' }));
    expect(await call('PUT', '/v1/queries')).toEqual(expect.objectContaining({ status: 405, allow: 'POST' }));
    expect(await call('GET', '/v1/workflows/01a22d8c-c74d-773c-8da3-835b380903bd/cancel')).toEqual(expect.objectContaining({ status: 405, allow: 'POST' }));
    expect((await call('GET', '/v1/nothing-here')).status).toBe(404);
    // Whatever the body: the method is wrong before the body is looked at.
    const text = await fetch(`${f.url}/v1/agents`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hello' });
    expect({ status: text.status, allow: text.headers.get('allow') }).toEqual({ status: 405, allow: 'GET, HEAD' });
    const options = await fetch(`${f.url}/v1/queries`, { method: 'OPTIONS' });
    expect({ status: options.status, allow: options.headers.get('allow') }).toEqual({ status: 204, allow: 'POST, OPTIONS' });
  });
});

describe('a deployment that allows long deadlines', () => {
  let g: ChorusFixture;

  beforeAll(async () => {
    g = await startChorusFixture({ CHORUS_MAX_DEADLINE_MS: '900000' });
  });
  afterAll(async () => {
    await g?.stop();
  });

  it('POST /v1/queries - a deadline_ms up to CHORUS_MAX_DEADLINE_MS is accepted, above it is a 400 naming the cap', async () => {
    expect((await postJson(`${g.url}/v1/queries`, { query: 'what does the hub keep', deadline_ms: 700_000 })).status).toBe(202);
    const over = await postJson(`${g.url}/v1/queries`, { query: 'what does the hub keep', deadline_ms: 900_001 });
    expect({ status: over.status, errors: over.body.errors }).toEqual({ status: 400, errors: [{ field: 'deadline_ms', messages: ['deadline_ms must not be greater than 900000'] }] });
    // Also above the bound of any deployment (an hour): the client hears this deployment's cap, not that one.
    for (const deadline_ms of [3_600_001, 1e10]) {
      const far = await postJson(`${g.url}/v1/queries`, { query: 'what does the hub keep', deadline_ms });
      expect({ status: far.status, errors: far.body.errors }).toEqual({ status: 400, errors: [{ field: 'deadline_ms', messages: ['deadline_ms must not be greater than 900000'] }] });
    }
  });
});
