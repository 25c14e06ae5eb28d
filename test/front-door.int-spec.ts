import { connect } from 'node:net';
import { getJson, postJson, startChorusFixture, type ChorusFixture } from './chorus.fixture';
import { LogCapture, waitFor } from '@chorus/testing';
import { openApiChecker } from './openapi.check';
import { readSse } from './sse';

describe('front door: events, idempotency, agents', () => {
  let f: ChorusFixture;

  beforeAll(async () => {
    // The session strategy applies to submissions with a session_id only; the others get UUIDv7 ids.
    f = await startChorusFixture({ CHORUS_CORRELATION_STRATEGY: 'session', CHORUS_ID_SECRET: 'front-door-test' });
  });
  afterAll(async () => {
    await f?.stop();
  });

  it('SSE - every step in causal order as it happens, then exactly one terminal event, then the end', async () => {
    const submitted = await postJson(`${f.url}/v1/queries`, { query: 'what does the responder answer with' });
    const id = submitted.body.correlation_id as string;
    const { status, events, contentType } = await readSse(`${f.url}/v1/workflows/${id}/events`);
    expect(status).toBe(200);
    expect(contentType).toMatch(/text\/event-stream/);
    const steps = events.filter((e) => e.event === 'step').map((e) => e.data);
    expect(steps.map((s) => s.message_type)).toEqual(['query', 'classification_result', 'execution_plan', 'tool_results', 'response', 'status_update']);
    for (let i = 1; i < 5; i++) expect(steps[i].causation_id).toBe(steps[i - 1].message_id);
    const terminal = events.filter((e) => e.event === 'terminal');
    expect(terminal).toHaveLength(1);
    expect(events[events.length - 1].event).toBe('terminal');
    expect(terminal[0].data.status).toBe('completed');
    expect(terminal[0].data.result.results.length).toBeGreaterThan(0);
    // The status as it stood when the stream opened, then each change, never backwards; the end is
    // the terminal event alone (a stream opened after the end replays the steps, with `running`).
    const statuses = events.filter((e) => e.event === 'status').map((e) => e.data.workflow_status);
    expect([['pending', 'running'], ['running']]).toContainEqual(statuses);
  });

  it('SSE - a finished workflow replays its steps and ends with its one terminal event; an unknown one is 404', async () => {
    const done = await postJson(`${f.url}/v1/queries?wait=true`, { query: 'profile:bm25' });
    expect(done.body.status).toBe('failed');
    const { events } = await readSse(`${f.url}/v1/workflows/${done.body.correlation_id}/events`);
    expect(events.filter((e) => e.event === 'terminal').map((e) => e.data.status)).toEqual(['failed']);
    // The replay starts with its first step, not with the final status ahead of every step.
    expect(events[0]).toMatchObject({ event: 'step', data: { message_type: 'query' } });
    expect(events.filter((e) => e.event === 'status').map((e) => e.data.workflow_status)).toEqual(['running']);
    expect((await readSse(`${f.url}/v1/workflows/no-such-workflow/events`)).status).toBe(404);
  });

  it('SSE - a reconnection resumes after the Last-Event-ID step; one after the terminal event gets 204, so an EventSource stops', async () => {
    const done = await postJson(`${f.url}/v1/queries?wait=true`, { query: 'what does the hub keep' });
    const url = `${f.url}/v1/workflows/${done.body.correlation_id}/events`;
    const all = (await readSse(url)).events;
    const steps = all.filter((e) => e.event === 'step');
    expect(steps.length).toBeGreaterThan(3);
    const resumed = (await readSse(url, { 'last-event-id': steps[1].id! })).events;
    expect(resumed.filter((e) => e.event === 'step').map((e) => e.id)).toEqual(steps.slice(2).map((e) => e.id));
    expect(resumed.filter((e) => e.event === 'terminal')).toHaveLength(1);
    // The status the skipped steps brought (running) came with them the first time: not again, after a later step.
    expect(resumed.filter((e) => e.event === 'status')).toEqual([]);
    const terminal = all.find((e) => e.event === 'terminal')!;
    expect((await readSse(url, { 'last-event-id': terminal.id! })).status).toBe(204);
    // An id that is none of this workflow's steps starts the stream over.
    expect((await readSse(url, { 'last-event-id': 'not-a-step' })).events.filter((e) => e.event === 'step').map((e) => e.id)).toEqual(steps.map((e) => e.id));
  });

  it('read right after the 202 - GET and history find the workflow the hub is about to record, never a 404', async () => {
    for (let i = 0; i < 5; i++) {
      const submitted = await postJson(`${f.url}/v1/queries`, { query: `what is recorded at once ${i}` });
      expect(submitted.status).toBe(202);
      const id = submitted.body.correlation_id as string;
      const [view, history] = await Promise.all([getJson(`${f.url}/v1/workflows/${id}`), getJson(`${f.url}/v1/workflows/${id}/history`)]);
      expect({ view: view.status, history: history.status }).toEqual({ view: 200, history: 200 });
      expect(view.body.correlation_id).toBe(id);
      expect(history.body.envelopes[0].message_type).toBe('query');
    }
    // An id nobody submitted is still a 404, at once.
    expect((await getJson(`${f.url}/v1/workflows/01a22d8c-c74d-773c-8da3-835b380903ba`)).status).toBe(404);
  });

  it('read right after the 202 - the event stream of another tenant\'s workflow, asked without tenant_id in development mode, is found, never a 404', async () => {
    for (let i = 0; i < 5; i++) {
      const id = (await postJson(`${f.url}/v1/queries`, { query: `whose stream is this ${i}`, tenant_id: 'globex' })).body.correlation_id as string;
      const { status, events } = await readSse(`${f.url}/v1/workflows/${id}/events`);
      expect([id, status]).toEqual([id, 200]);
      expect(events.at(-1)?.event).toBe('terminal');
      expect(events.at(-1)?.data.tenant_id).toBe('globex');
    }
  });

  it('Idempotency-Key - the same key returns the same workflow (200), and nothing new runs', async () => {
    const headers = { 'idempotency-key': `test-key-${Date.now()}` };
    const first = await postJson(`${f.url}/v1/queries`, { query: 'what is an idempotency key' }, headers);
    expect(first.status).toBe(202);
    const again = await postJson(`${f.url}/v1/queries`, { query: 'what is an idempotency key' }, headers);
    expect(again.status).toBe(200);
    expect(again.body.correlation_id).toBe(first.body.correlation_id);
    const waited = await postJson(`${f.url}/v1/queries?wait=true`, { query: 'what is an idempotency key' }, headers);
    expect(waited.status).toBe(200);
    expect(waited.body.correlation_id).toBe(first.body.correlation_id);
    expect(waited.body.status).toBe('completed');
    const history = (await getJson(`${f.url}/v1/workflows/${first.body.correlation_id}/history`)).body.envelopes;
    expect(history.filter((e: { message_type: string }) => e.message_type === 'query')).toHaveLength(1);
    const bad = await postJson(`${f.url}/v1/queries`, { query: 'x' }, { 'idempotency-key': 'has spaces in it' });
    expect(bad.status).toBe(400);
    // The same key with another request is refused, naming what differs; the deadline may differ.
    const other = await postJson(`${f.url}/v1/queries`, { query: 'what is a different query', top_k: 3 }, headers);
    expect({ status: other.status, errors: other.body.errors }).toEqual({ status: 422, errors: [{ field: 'Idempotency-Key', messages: ['used before for a request whose query, top_k differ'] }] });
    const later = await postJson(`${f.url}/v1/queries`, { query: ' what is an idempotency key ', deadline_ms: 20_000, profiles: [] }, headers);
    expect(later.status).toBe(200);
    // Compared as the session strategy compares submissions: the query trimmed, the profiles a set.
    // What the request leaves out is not a difference: top_k takes each process's default.
    const set = { 'idempotency-key': `test-key-set-${Date.now()}` };
    expect((await postJson(`${f.url}/v1/queries`, { query: 'what is a set', profiles: ['bm25', 'trigram'], top_k: 3 }, set)).status).toBe(202);
    expect((await postJson(`${f.url}/v1/queries`, { query: 'what is a set', profiles: ['trigram', 'bm25'] }, set)).status).toBe(200);
    expect((await postJson(`${f.url}/v1/queries`, { query: 'what is a set', profiles: ['bm25'], top_k: 4 }, set)).body.errors).toEqual([
      { field: 'Idempotency-Key', messages: ['used before for a request whose profiles, top_k differ'] },
    ]);
    // A key reused at once, before the hub has recorded its workflow (the stream drops the publish), is checked too.
    const fresh = { 'idempotency-key': `test-key-fresh-${Date.now()}` };
    const [a, b] = await Promise.all([
      postJson(`${f.url}/v1/queries`, { query: 'what is a race' }, fresh),
      postJson(`${f.url}/v1/queries`, { query: 'what is another race' }, fresh),
    ]);
    expect([a.status, b.status].sort()).toEqual([202, 422]);
    // The refused one is not counted as a duplicate of the workflow (a notice would have been sent before the 422).
    const accepted = (a.status === 202 ? a : b).body.correlation_id as string;
    await new Promise((r) => setTimeout(r, 500));
    expect((await getJson(`${f.url}/v1/workflows/${accepted}`)).body.duplicates_dropped).toBe(0);
  });

  it('session strategy - the same request of a session within its second is one workflow (200 the second time); another top_k or profiles is another workflow', async () => {
    const body = { query: 'how are workflows tracked', session_id: `sess-${Date.now()}`, top_k: 3 };
    // Within one second of the clock, so the four submissions share their unix second.
    while (Date.now() % 1000 > 500) await new Promise((r) => setTimeout(r, 50));
    const [first, again, more, lens] = await Promise.all([
      postJson(`${f.url}/v1/queries`, body),
      postJson(`${f.url}/v1/queries`, { ...body, query: ` ${body.query} ` }),
      postJson(`${f.url}/v1/queries`, { ...body, top_k: 7 }),
      postJson(`${f.url}/v1/queries`, { ...body, profiles: ['bm25'] }),
    ]);
    expect([first.status, again.status].sort()).toEqual([200, 202]);
    expect(again.body.correlation_id).toBe(first.body.correlation_id);
    expect([more.status, lens.status]).toEqual([202, 202]);
    const ids = [first, more, lens].map((r) => r.body.correlation_id as string);
    expect(new Set(ids).size).toBe(3);
    for (const id of ids) expect(id.startsWith(`${body.session_id}_`)).toBe(true);
    const done = await Promise.all(
      ids.map((id) => waitFor(async () => ((r) => (r.body.status === 'completed' ? r.body : undefined))(await getJson(`${f.url}/v1/workflows/${id}`)), { what: `${id} completed` })),
    );
    expect(done.map((w) => w.result.results.length)).toEqual([3, 7, 3]);
    expect(done[2].result.results.every((r: { ranks: Record<string, number> }) => Object.keys(r.ranks).join() === 'bm25')).toBe(true);
    expect(done[0].steps.filter((s: { message_type: string }) => s.message_type === 'query')).toHaveLength(1);
  });

  it('GET /v1/agents - discovered agents and profiles with instances, health and latency', async () => {
    await postJson(`${f.url}/v1/queries?wait=true`, { query: 'what are agents' });
    const r = await getJson(`${f.url}/v1/agents`);
    expect(r.status).toBe(200);
    const byName = Object.fromEntries(r.body.agents.map((a: { name: string }) => [a.name, a]));
    for (const name of ['hub', 'intent', 'planner', 'search', 'responder']) {
      expect(byName[name]).toEqual(expect.objectContaining({ instances: 1, health: 'up' }));
    }
    expect(byName.search.consumers).toEqual([expect.objectContaining({ name: 'search_execution_plan' })]);
    expect(byName.search.window).toEqual(expect.objectContaining({ count: expect.any(Number), p50_ms: expect.any(Number) }));
    expect(r.body.profiles.map((p: { name: string }) => p.name)).toEqual(['bm25', 'trigram']);
    expect(r.body.profiles[0]).toEqual(expect.objectContaining({ instances: 1, health: 'up', requests: expect.any(Number) }));
    expect(r.body.profiles[0].requests).toBeGreaterThan(0);
  });
});

describe('front door: tenancy', () => {
  let f: ChorusFixture;
  const ACME = 'acme-key-0123456789abcdef';
  const GLOBEX = 'globex-key-0123456789abcdef';

  const logs = new LogCapture();

  beforeAll(async () => {
    f = await startChorusFixture({ CHORUS_API_KEYS: `${ACME}:acme,${GLOBEX}:globex`, CHORUS_LOG_LEVEL: 'info' }, {}, undefined, logs);
  });
  afterAll(async () => {
    await f?.stop();
  });

  const auth = (key: string) => ({ authorization: `Bearer ${key}` });

  it('tenancy - request log lines never carry an API key, accepted or refused, from either header or over A2A', async () => {
    await getJson(`${f.url}/v1/workflows`, auth(ACME));
    await getJson(`${f.url}/v1/workflows`, { 'x-api-key': GLOBEX });
    await getJson(`${f.url}/v1/workflows`, auth('refused-key-0123456789abcdef'));
    await postJson(`${f.url}/a2a`, { jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: 'x' } }, auth(ACME));
    const lines = await waitFor(() => {
      const found = logs.lines.filter((l) => (l.req as { url?: string } | undefined)?.url !== undefined);
      return found.length >= 4 ? found : undefined;
    });
    expect(logs.raw.filter((l) => /acme-key|globex-key|refused-key/.test(l))).toEqual([]);
    const headers = lines.map((l) => (l.req as { headers: Record<string, string> }).headers);
    expect(headers.filter((h) => h.authorization !== undefined).every((h) => h.authorization === '[redacted]')).toBe(true);
    expect(headers.some((h) => h['x-api-key'] === '[redacted]')).toBe(true);
  });

  it('tenancy - a missing or wrong key is 401; health needs none', async () => {
    expect((await postJson(`${f.url}/v1/queries`, { query: 'hello' })).status).toBe(401);
    const wrong = await postJson(`${f.url}/v1/queries`, { query: 'hello' }, auth('not-a-real-key-at-all'));
    expect(wrong.status).toBe(401);
    expect(wrong.body.message).toBe('unknown API key');
    expect((await getJson(`${f.url}/v1/workflows`)).status).toBe(401);
    expect((await getJson(`${f.url}/health`)).status).toBe(200);
  });

  it('tenancy - two different keys (Authorization and X-API-Key) are a 401, not a silent choice of one; the same key twice is fine', async () => {
    const both = await getJson(`${f.url}/v1/workflows`, { ...auth(ACME), 'x-api-key': GLOBEX });
    expect({ status: both.status, message: both.body.message }).toEqual({ status: 401, message: expect.stringMatching(/two different API keys/) });
    const a2a = await postJson(`${f.url}/a2a`, { jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: 'x' } }, { ...auth(GLOBEX), 'x-api-key': ACME });
    expect(a2a.status).toBe(401);
    expect((await getJson(`${f.url}/v1/workflows`, { ...auth(ACME), 'x-api-key': ACME })).status).toBe(200);
    // The same header twice, as sent (Node's parsed headers keep the first Authorization, and join
    // repeated X-API-Key headers: a second key went unseen, the same key twice was "unknown").
    expect(await statusWithHeaders(`${f.url}/v1/workflows`, ['Authorization', `Bearer ${ACME}`, 'Authorization', `Bearer ${GLOBEX}`])).toBe(401);
    expect(await statusWithHeaders(`${f.url}/v1/workflows`, ['X-API-Key', ACME, 'X-API-Key', GLOBEX])).toBe(401);
    expect(await statusWithHeaders(`${f.url}/v1/workflows`, ['X-API-Key', ACME, 'X-API-Key', ACME])).toBe(200);
  });

  it("tenancy - each request is scoped to its key's tenant; another tenant's workflow is 404", async () => {
    const mine = await postJson(`${f.url}/v1/queries?wait=true`, { query: 'what is a tenant' }, auth(ACME));
    expect(mine.status).toBe(200);
    expect(mine.body.tenant_id).toBe('acme');
    const id = mine.body.correlation_id as string;
    const get = (key: string, path = '') => fetch(`${f.url}/v1/workflows/${id}${path}`, { headers: auth(key) });
    expect((await get(ACME)).status).toBe(200);
    expect((await get(GLOBEX)).status).toBe(404);
    expect((await get(GLOBEX, '/history')).status).toBe(404);
    expect((await readSse(`${f.url}/v1/workflows/${id}/events`, auth(GLOBEX))).status).toBe(404);
    const cancel = await fetch(`${f.url}/v1/workflows/${id}/cancel`, { method: 'POST', headers: auth(GLOBEX) });
    expect(cancel.status).toBe(404);
    const listed = (await (await fetch(`${f.url}/v1/workflows`, { headers: auth(GLOBEX) })).json()) as { workflows: unknown[] };
    expect(listed.workflows).toEqual([]);
    // The stats too, down to the agents' traffic: acme's steps are not globex's business.
    type Stats = { totals: { created: number }; agents: Array<{ agent: string; count: number }> };
    const stats = (await (await fetch(`${f.url}/v1/stats`, { headers: auth(GLOBEX) })).json()) as Stats;
    expect({ created: stats.totals.created, agents: stats.agents }).toEqual({ created: 0, agents: [] });
    const own = (await (await fetch(`${f.url}/v1/stats`, { headers: auth(ACME) })).json()) as Stats;
    expect(own.totals.created).toBe(1);
    expect(own.agents.map((a) => [a.agent, a.count])).toEqual([['intent', 1], ['planner', 1], ['responder', 1], ['search', 1]]);
    // And on the agents page: instances and health are the deployment's, the step figures the tenant's.
    type Agents = { agents: Array<{ name: string; health: string; window: { count: number } | null }> };
    const theirs = (await (await fetch(`${f.url}/v1/agents`, { headers: auth(GLOBEX) })).json()) as Agents;
    expect(theirs.agents.filter((a) => a.health === 'up').map((a) => [a.name, a.window])).toEqual(['hub', 'intent', 'planner', 'responder', 'search'].map((n) => [n, null]));
    const ours = (await (await fetch(`${f.url}/v1/agents`, { headers: auth(ACME) })).json()) as Agents;
    expect(ours.agents.filter((a) => a.window).map((a) => [a.name, a.window!.count])).toEqual([['intent', 1], ['planner', 1], ['responder', 1], ['search', 1]]);
  });

  it("tenancy - naming another tenant in the body is 403", async () => {
    const r = await postJson(`${f.url}/v1/queries`, { query: 'hello', tenant_id: 'globex' }, auth(ACME));
    expect(r.status).toBe(403);
  });

  it('OpenAPI - the 401 and 403 answers with keys configured are the ones the document lists, field for field', async () => {
    const mismatch = await openApiChecker(f.url);
    const answers: Array<[string, string, { status: number; body: unknown }]> = [
      ['/v1/agents', 'get', await getJson(`${f.url}/v1/agents`)],
      ['/v1/workflows/{id}', 'get', await getJson(`${f.url}/v1/workflows/x`)],
      ['/v1/queries', 'post', await postJson(`${f.url}/v1/queries`, { query: 'hello' }, auth('not-a-real-key-at-all'))],
      ['/v1/workflows/{id}', 'get', await getJson(`${f.url}/v1/workflows/x?tenant_id=globex`, auth(ACME))],
      ['/v1/workflows/{id}/history', 'get', await getJson(`${f.url}/v1/workflows/x/history?tenant_id=globex`, auth(ACME))],
      ['/v1/workflows/{id}/events', 'get', await getJson(`${f.url}/v1/workflows/x/events?tenant_id=globex`, auth(ACME))],
      ['/v1/workflows/{id}/cancel', 'post', await postJson(`${f.url}/v1/workflows/x/cancel?tenant_id=globex`, {}, auth(ACME))],
      ['/v1/workflows/{id}/retry', 'post', await postJson(`${f.url}/v1/workflows/x/retry?tenant_id=globex`, {}, auth(ACME))],
      ['/v1/workflows', 'get', await getJson(`${f.url}/v1/workflows?tenant_id=globex`, auth(ACME))],
      ['/v1/stats', 'get', await getJson(`${f.url}/v1/stats?tenant_id=globex`, auth(ACME))],
      ['/v1/queries', 'post', await postJson(`${f.url}/v1/queries`, { query: 'hello', tenant_id: 'globex' }, auth(ACME))],
      // A wrong method is a 405 before any key is asked for.
      ['/v1/agents', 'delete', await fetch(`${f.url}/v1/agents`, { method: 'DELETE' }).then(async (r) => ({ status: r.status, body: await r.json() }))],
    ];
    expect(answers.map(([, , a]) => a.status)).toEqual([401, 401, 401, 403, 403, 403, 403, 403, 403, 403, 403, 405]);
    for (const [path, method, answer] of answers) expect({ path, method, mismatch: mismatch(path, method, answer) }).toEqual({ path, method, mismatch: null });
  });
});

describe('front door: OpenAPI', () => {
  let f: ChorusFixture;

  beforeAll(async () => {
    f = await startChorusFixture();
  });
  afterAll(async () => {
    await f?.stop();
  });

  it('dashboard - its pages may not be framed by another site (its buttons act with the stored key), and no answer names the server framework', async () => {
    for (const path of ['/', '/index.html', '/js/main.js']) {
      const res = await fetch(`${f.url}${path}`);
      expect({ path, status: res.status, csp: res.headers.get('content-security-policy'), frame: res.headers.get('x-frame-options') }).toEqual({ path, status: 200, csp: "frame-ancestors 'none'", frame: 'DENY' });
    }
    for (const path of ['/', '/health', '/v1/agents', '/v1/nothing-here', '/docs']) expect({ path, poweredBy: (await fetch(`${f.url}${path}`)).headers.get('x-powered-by') }).toEqual({ path, poweredBy: null });
  });

  it('OpenAPI - the UI page loads every file it names at /docs, /docs/ (with or without a query) and /docs/index.html', async () => {
    for (const path of ['/docs', '/docs/', '/docs/?tag=workflows', '/docs/index.html']) {
      const page = await fetch(`${f.url}${path}`);
      const html = await page.text();
      const files = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => new URL(m[1], page.url).pathname);
      const statuses = await Promise.all(files.map(async (file) => [file, (await fetch(`${f.url}${file}`)).status]));
      expect({ path, status: page.status, files: statuses.length, missing: statuses.filter(([, status]) => status !== 200) }).toEqual({ path, status: 200, files: 6, missing: [] });
    }
    const slash = await fetch(`${f.url}/docs/?tag=workflows`, { redirect: 'manual' });
    expect({ status: slash.status, location: slash.headers.get('location') }).toEqual({ status: 301, location: '../docs?tag=workflows' });
  });

  it('OpenAPI - /docs serves the UI and /docs/openapi.json documents every route and the query body', async () => {
    const ui = await fetch(`${f.url}/docs`);
    expect(ui.status).toBe(200);
    expect(await ui.text()).toMatch(/swagger/i);
    const doc = (await getJson(`${f.url}/docs/openapi.json`)).body;
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/v1/queries',
        '/v1/workflows',
        '/v1/workflows/{id}',
        '/v1/workflows/{id}/history',
        '/v1/workflows/{id}/events',
        '/v1/workflows/{id}/cancel',
        '/v1/agents',
        '/v1/stats',
        '/health',
        '/ready',
      ]),
    );
    // What each route answers, and the tenant_id every workflow route and the stats take.
    const responses = (path: string, method: string) => Object.keys(doc.paths[path][method].responses).sort();
    expect(responses('/v1/workflows/{id}', 'get')).toEqual(['200', '400', '401', '403', '404', '405', '503']);
    expect(responses('/v1/workflows/{id}/cancel', 'post')).toEqual(['202', '400', '401', '403', '404', '405', '409', '413', '415', '503']);
    expect(responses('/v1/workflows/{id}/events', 'get')).toEqual(['200', '204', '400', '401', '403', '404', '405', '503']);
    expect(responses('/v1/stats', 'get')).toEqual(['200', '400', '401', '403', '405', '503']);
    expect(responses('/v1/agents', 'get')).toEqual(['200', '400', '401', '405', '503']);
    // Every route answers a method it does not take with a 405 (before any key is asked for).
    for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, { responses: Record<string, unknown> }>>)) {
      for (const method of Object.keys(item)) expect({ path, method, has405: '405' in item[method].responses }).toEqual({ path, method, has405: true });
    }
    expect(doc.paths['/v1/workflows/{id}/cancel'].post.requestBody.required).toBe(false);
    // The event stream is text/event-stream; its refusals are JSON like every other route's.
    const events = doc.paths['/v1/workflows/{id}/events'].get.responses;
    expect({ ok: Object.keys(events['200'].content), missing: Object.keys(events['404'].content) }).toEqual({ ok: ['text/event-stream'], missing: ['application/json'] });
    expect(doc.components.securitySchemes.bearer).toMatchObject({ scheme: 'bearer', bearerFormat: 'API key' });
    expect(responses('/v1/queries', 'post')).toEqual(expect.arrayContaining(['200', '202', '400', '401', '403', '413', '415', '422', '504']));
    for (const [path, method] of [['/v1/workflows/{id}', 'get'], ['/v1/workflows/{id}/history', 'get'], ['/v1/workflows/{id}/events', 'get'], ['/v1/workflows/{id}/cancel', 'post'], ['/v1/workflows/{id}/retry', 'post'], ['/v1/stats', 'get']]) {
      expect({ path, params: doc.paths[path][method].parameters.filter((p: { in: string }) => p.in === 'query').map((p: { name: string }) => p.name) }).toEqual({ path, params: ['tenant_id'] });
    }
    expect(doc.components.schemas.SubmitQueryDto.required).toEqual(['query']);
    expect(Object.keys(doc.components.schemas.SubmitQueryDto.properties).sort()).toEqual(
      ['deadline_ms', 'profiles', 'query', 'require_all', 'session_id', 'tenant_id', 'top_k'],
    );
    // Defaults and the deadline cap as this deployment has them.
    const { top_k, deadline_ms } = doc.components.schemas.SubmitQueryDto.properties;
    expect({ top_k: top_k.default, deadline: deadline_ms.default, max: deadline_ms.maximum }).toEqual({
      top_k: f.config.workflow.defaultTopK,
      deadline: f.config.workflow.defaultDeadlineMs,
      max: f.config.workflow.maxDeadlineMs,
    });
  });

  it('OpenAPI - real answers match the response schemas the document publishes, field for field', async () => {
    const mismatch = await openApiChecker(f.url);
    const check = (path: string, method: string, answer: { status: number; body: unknown }) => expect({ path, method, mismatch: mismatch(path, method, answer) }).toEqual({ path, method, mismatch: null });

    const accepted = await postJson(`${f.url}/v1/queries`, { query: 'what does the hub record' });
    check('/v1/queries', 'post', accepted);
    const id = accepted.body.correlation_id as string;
    await waitFor(async () => ['completed', 'failed'].includes((await getJson(`${f.url}/v1/workflows/${id}`)).body.status), { what: 'the workflow to end' });
    check('/v1/queries', 'post', await postJson(`${f.url}/v1/queries?wait=true`, { query: 'what does the hub record', top_k: 3 }));
    check('/v1/queries', 'post', await postJson(`${f.url}/v1/queries`, { query: '', top_k: 0 }));
    check('/v1/workflows/{id}', 'get', await getJson(`${f.url}/v1/workflows/${id}`));
    check('/v1/workflows/{id}', 'get', await getJson(`${f.url}/v1/workflows/no-such-workflow`));
    check('/v1/workflows/{id}/history', 'get', await getJson(`${f.url}/v1/workflows/${id}/history`));
    check('/v1/workflows', 'get', await getJson(`${f.url}/v1/workflows?limit=2`));
    check('/v1/workflows/{id}/cancel', 'post', await postJson(`${f.url}/v1/workflows/${id}/cancel`, {}));
    check('/v1/workflows/{id}/retry', 'post', await postJson(`${f.url}/v1/workflows/${id}/retry`, {}));
    const plain = await fetch(`${f.url}/v1/workflows/${id}/cancel`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'stop' });
    check('/v1/workflows/{id}/cancel', 'post', { status: plain.status, body: await plain.json() });
    check('/v1/workflows/{id}/retry', 'post', await postJson(`${f.url}/v1/workflows/${id}/retry`, { reason: 'r'.repeat(200_000) }));
    // A 405 is checked against the 405 each method the path takes lists.
    check('/v1/agents', 'delete', await methodAnswer(`${f.url}/v1/agents`, 'DELETE'));
    check('/v1/queries', 'get', await getJson(`${f.url}/v1/queries`));
    check('/health', 'post', await methodAnswer(`${f.url}/health`, 'POST'));
  });
});

/** The status of a GET sent with exactly these header lines, repeated ones included ([name, value, name, value, …]). */
function statusWithHeaders(url: string, headers: string[]): Promise<number> {
  const { hostname, port, pathname } = new URL(url);
  const lines = [`GET ${pathname} HTTP/1.1`, `Host: ${hostname}:${port}`, 'Connection: close'];
  for (let i = 0; i + 1 < headers.length; i += 2) lines.push(`${headers[i]}: ${headers[i + 1]}`);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(`${lines.join('\r\n')}\r\n\r\n`));
    let answer = '';
    socket.on('data', (d: Buffer) => (answer += d.toString()));
    socket.on('end', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0)));
    socket.on('error', reject);
  });
}

async function methodAnswer(url: string, method: string): Promise<{ status: number; body: unknown }> {
  const res = await fetch(url, { method });
  return { status: res.status, body: await res.json() };
}

describe('front door: health and metrics', () => {
  let f: ChorusFixture;

  beforeAll(async () => {
    f = await startChorusFixture();
  });
  afterAll(async () => {
    await f?.stop();
  });

  it('health - /health is live, /ready checks NATS and the stream, /metrics is Prometheus with workflows, steps, duplicates and dead letters', async () => {
    expect((await getJson(`${f.url}/health`)).body).toEqual({ status: 'ok' });
    const ready = await getJson(`${f.url}/ready`);
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual(expect.objectContaining({ status: 'ready', stream: 'CHORUS_WF' }));
    await postJson(`${f.url}/v1/queries?wait=true`, { query: 'what are metrics' });
    await f.chorus.bus.js.publish('chorus.wf.default.query.bad-metrics', 'not an envelope');
    await new Promise((r) => setTimeout(r, 300));
    const res = await fetch(`${f.url}/metrics`);
    expect(res.headers.get('content-type')).toMatch(/text\/plain/);
    const text = await res.text();
    /** The value of the sample `name` whose labels include `labels`, in any order. */
    const sample = (name: string, labels: Record<string, string> = {}) => {
      const line = text.split('\n').find((l) => {
        const m = /^([a-z_]+)\{(.*)\} (\S+)$/.exec(l);
        return m && m[1] === name && Object.entries(labels).every(([k, v]) => m[2].split(',').includes(`${k}="${v}"`));
      });
      return line === undefined ? undefined : Number(line.split(' ').pop());
    };
    expect(sample('chorus_workflows', { status: 'completed' })).toBe(1);
    expect(sample('chorus_step_duration_seconds_count', { agent: 'search', message_type: 'execution_plan' })).toBe(1);
    expect(sample('chorus_envelopes_total', { agent: 'responder', message_type: 'tool_results', outcome: 'ok' })).toBe(1);
    expect(sample('chorus_envelopes_total', { agent: 'intent', message_type: 'query', outcome: 'invalid' })).toBe(1);
    expect(sample('chorus_dead_letters')).toBe(1);
    expect(sample('chorus_duplicates_dropped')).toBe(0);
    expect(text).toMatch(/process_resident_memory_bytes/);
  });
});

describe('front door: waiting on a workflow that is still running', () => {
  let f: ChorusFixture;

  beforeAll(async () => {
    // No planner: a workflow stays running until its deadline.
    f = await startChorusFixture({}, {}, ['hub', 'ingress', 'intent']);
  });
  afterAll(async () => {
    await f?.stop();
  });

  it('Idempotency-Key - ?wait=true with the key of a running workflow waits for its end, as the first caller would', async () => {
    const headers = { 'idempotency-key': `test-key-running-${Date.now()}` };
    const first = await postJson(`${f.url}/v1/queries`, { query: 'what does a planner do', deadline_ms: 2_500 }, headers);
    expect(first.status).toBe(202);
    const id = first.body.correlation_id as string;
    await waitFor(async () => ((await getJson(`${f.url}/v1/workflows/${id}`)).body.status === 'running' ? true : undefined), { what: `${id} running` });
    const started = Date.now();
    const waited = await postJson(`${f.url}/v1/queries?wait=true`, { query: 'what does a planner do', deadline_ms: 2_500 }, headers);
    expect({ status: waited.status, id: waited.body.correlation_id, workflow: waited.body.status }).toEqual({ status: 200, id, workflow: 'timed_out' });
    expect(Date.now() - started).toBeGreaterThan(1_000);
  });
});
