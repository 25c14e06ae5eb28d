import fc from 'fast-check';
import { waitFor } from '@chorus/testing';
import { postJson, startChorusFixture, type ChorusFixture } from './chorus.fixture';
import { CID_RE, UNREADABLE_ISO_DATES, deepText, describeCrash, isFieldErrorList, labelled, watchCrashes } from './fuzz.arbitraries';

const TERMINAL = ['completed', 'failed', 'timed_out', 'cancelled'];
const STATUSES = ['pending', 'running', ...TERMINAL];

interface Req {
  method: string;
  /** Path and query string, already encoded (or deliberately mis-encoded). */
  url: string;
  headers: Record<string, string>;
  body?: string;
  /** The top-level keys of a JSON object body, for checking which fields a 400 names. */
  bodyKeys?: string[];
  /** How the route handles it, for route-specific checks. */
  route: 'submit' | 'list' | 'workflow' | 'history' | 'events' | 'cancel' | 'agents' | 'stats' | 'other';
  /** A valid correlation id with an invalid tenant_id: the 400 must name tenant_id. */
  badTenantOnly?: boolean;
}

interface Answer {
  status: number;
  contentType: string;
  text: string;
  json: any;
  ms: number;
}

function safeDecode(v: string): string {
  try {
    return decodeURIComponent(v);
  } catch {
    return v;
  }
}

function check(ok: unknown, message: () => string): void {
  if (!ok) throw new Error(message());
}

// ---------------------------------------------------------------- generators

const enc = encodeURIComponent;
/** Header values fetch can send: visible ASCII and Latin-1, inner spaces, no CR/LF/NUL. */
const headerValue = fc.oneof(
  fc.stringMatching(/^[!-~]([ -~]{0,80}[!-~])?$/),
  fc.string({ unit: fc.integer({ min: 0xa0, max: 0xff }).map((c) => String.fromCharCode(c)), minLength: 1, maxLength: 20 }),
  fc.constantFrom('', 'Bearer ', 'Bearer x', `Bearer ${'k'.repeat(300)}`, '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', '00-00000000000000000000000000000000-0000000000000000-00', 'ff-zz', '__proto__', 'constructor'),
);
const contentType = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=utf-16',
  'application/json; charset=latin1',
  'APPLICATION/JSON',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/merge-patch+json',
  'application/json;;;',
);
const headersArb = fc
  .record(
    {
      'content-type': contentType,
      'idempotency-key': headerValue,
      authorization: headerValue,
      'x-api-key': headerValue,
      traceparent: headerValue,
      tracestate: headerValue,
      accept: fc.constantFrom('*/*', 'text/event-stream', 'application/json', 'text/html', 'x/y'),
      'content-encoding': fc.constantFrom('gzip', 'br', 'deflate', 'identity', 'foo'),
      'a2a-version': headerValue,
      'x-forwarded-for': headerValue,
    },
    { requiredKeys: [] },
  )
  .map((h) => {
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(h)) if (v !== undefined) out[k] = v;
    return out;
  });

const validId = fc.stringMatching(/^[A-Za-z0-9_-]{1,128}$/);
const tenantValue = fc.oneof(fc.constantFrom('default', 'acme', 'nobody'), fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,62}$/));
const junkValue = fc.oneof(
  fc.string({ maxLength: 40 }).map(enc),
  fc.string({ unit: 'binary', maxLength: 20 }).map((s) => enc(s.replace(/[\ud800-\udfff]/g, '?'))),
  fc.constantFrom('', '%', '%E0%A4%A', '%00', '__proto__', 'constructor', '[]', 'a&b', '1e3', '0x10', '-1', '9'.repeat(40), 'NaN', 'true', 'x'.repeat(600)),
);
/** An id for /v1/workflows/:id — known, random valid, or not an id at all (mis-encoded too). */
const idArb = (known: () => string[]) =>
  fc.oneof(
    { weight: 2, arbitrary: fc.constant(null).map(() => known()[0]) },
    { weight: 3, arbitrary: validId },
    { weight: 2, arbitrary: fc.string({ minLength: 1, maxLength: 40 }).map(enc) },
    { weight: 1, arbitrary: fc.constantFrom('%', '%E0%A4%A', 'a%2Fb', 'x'.repeat(129), '%20', 'a.b', '__proto__', 'constructor') },
  );

/** Values for the list filters: valid ones, near misses, and junk. */
const listParam: Record<string, fc.Arbitrary<string>> = {
  status: fc.oneof(fc.constantFrom(...STATUSES), junkValue),
  agent: fc.oneof(fc.constantFrom('hub', 'intent', 'search', 'ingress', 'Agent'), junkValue),
  since: fc.oneof(fc.date({ noInvalidDate: true, min: new Date('2000-01-01'), max: new Date('2100-01-01') }).map((d) => d.toISOString()), fc.constantFrom(...UNREADABLE_ISO_DATES, '2026-11-30'), junkValue),
  until: fc.oneof(fc.date({ noInvalidDate: true, min: new Date('2000-01-01'), max: new Date('2100-01-01') }).map((d) => d.toISOString()), fc.constantFrom(...UNREADABLE_ISO_DATES), junkValue),
  limit: fc.oneof(fc.integer({ min: -5, max: 600 }).map(String), junkValue),
  cursor: fc.oneof(
    fc.jsonValue({ maxDepth: 2 }).map((v) => Buffer.from(JSON.stringify(v)).toString('base64url')),
    fc.record({ started_at: fc.string({ maxLength: 30 }), correlation_id: fc.string({ maxLength: 30 }) }).map((v) => Buffer.from(JSON.stringify(v)).toString('base64url')),
    fc.stringMatching(/^[A-Za-z0-9_-]{1,80}$/),
    junkValue,
  ),
  tenant_id: fc.oneof(tenantValue, junkValue),
};
const queryString = (keys: string[]) =>
  fc
    .array(
      fc.oneof(
        { weight: 3, arbitrary: fc.constantFrom(...keys).chain((k) => (listParam[k] ?? junkValue).map((v) => `${k}=${v}`)) },
        { weight: 1, arbitrary: fc.tuple(fc.oneof(fc.constantFrom('__proto__', 'constructor', 'toString', 'a[b]', 'x'), fc.string({ maxLength: 10 }).map(enc)), junkValue).map(([k, v]) => `${k}=${v}`) },
      ),
      { maxLength: 4 },
    )
    .map((parts) => (parts.length > 0 ? `?${parts.join('&')}` : ''));

const submitBody = fc
  .record(
    {
      query: fc.oneof(fc.constantFrom('what does the correlation hub keep', 'how does chorus drop duplicates', 'profile:bm25 fusion'), fc.string({ maxLength: 60 }), fc.jsonValue({ maxDepth: 1 }), fc.constant('q'.repeat(4001))),
      tenant_id: fc.oneof(tenantValue, fc.jsonValue({ maxDepth: 1 })),
      session_id: fc.oneof(fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/), fc.jsonValue({ maxDepth: 1 })),
      profiles: fc.oneof(fc.subarray(['bm25', 'trigram']), fc.array(fc.string({ maxLength: 8 }), { maxLength: 3 }), fc.jsonValue({ maxDepth: 1 })),
      top_k: fc.oneof(fc.integer({ min: -2, max: 120 }), fc.double(), fc.jsonValue({ maxDepth: 1 })),
      deadline_ms: fc.oneof(fc.integer({ min: 0, max: 700_000 }), fc.constantFrom(100, 2000, 5000), fc.jsonValue({ maxDepth: 1 })),
      require_all: fc.oneof(fc.boolean(), fc.jsonValue({ maxDepth: 1 })),
      extra: fc.jsonValue({ maxDepth: 2 }),
    },
    { requiredKeys: [] },
  )
  .chain((o) => fc.tuple(fc.constant(o), fc.option(fc.jsonValue({ maxDepth: 1 }), { nil: undefined }), fc.option(fc.jsonValue({ maxDepth: 1 }), { nil: undefined })))
  .map(([o, proto, ctor]) => {
    // Own `__proto__` / `constructor` keys, as a client's JSON can carry them.
    const out: Record<string, unknown> = {};
    for (const [k, v] of [...Object.entries(o), ['__proto__', proto], ['constructor', ctor]] as Array<[string, unknown]>) {
      if (v !== undefined) Object.defineProperty(out, k, { value: v, enumerable: true });
    }
    return out;
  });
/** A body: submit-shaped JSON, any JSON, not JSON, too big, or deeply nested. */
const bodyArb: fc.Arbitrary<{ body?: string; keys?: string[] }> = fc.oneof(
  { weight: 5, arbitrary: submitBody.map((o) => ({ body: JSON.stringify(o), keys: Object.keys(o) })) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => ({ body: JSON.stringify(v) ?? 'null' })) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 100 }).map((s) => ({ body: s.replace(/[\ud800-\udfff]/g, '?') })) },
  { weight: 1, arbitrary: fc.constantFrom('', '{', '{"query": ', '{"query":"x",}', 'NaN', '{"query":"x","top_k":NaN}', '\ufeff{"query":"x"}', '{"query":"x"}{"query":"y"}').map((body) => ({ body })) },
  { weight: 1, arbitrary: fc.integer({ min: 60 * 1024, max: 80 * 1024 }).map((n) => ({ body: JSON.stringify({ query: 'x', padding: 'p'.repeat(n) }), keys: ['query', 'padding'] })) },
  { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 2, max: 12_000 }), fc.constantFrom<'object' | 'array'>('object', 'array')).map(([n, kind]) => ({ body: `{"query":"x","deep":${deepText(n, kind)}}`, keys: ['query', 'deep'] })) },
  { weight: 1, arbitrary: fc.constant({}) },
);

function requestArb(known: () => string[]): fc.Arbitrary<Req> {
  const id = idArb(known);
  const routes: Array<fc.Arbitrary<Req>> = [
    fc.tuple(fc.constantFrom('', '?wait=true', '?wait=false', '?wait=1', '?wait=maybe', '?wait=true&wait=true', '?wait='), bodyArb, headersArb).map(([q, b, h]) => ({ method: 'POST', url: `/v1/queries${q}`, headers: h, body: b.body, bodyKeys: b.keys, route: 'submit' as const })),
    fc.tuple(queryString(Object.keys(listParam)), headersArb).map(([q, h]) => ({ method: 'GET', url: `/v1/workflows${q}`, headers: h, route: 'list' as const })),
    fc.tuple(id, fc.constantFrom('', '/history', '/events'), queryString(['tenant_id']), headersArb).map(([i, sub, q, h]) => ({ method: 'GET', url: `/v1/workflows/${i}${sub}${q}`, headers: h, route: (sub ? sub.slice(1) : 'workflow') as Req['route'] })),
    fc.tuple(validId, fc.constantFrom('', '/history', '/events', '/cancel'), fc.constantFrom('UPPER', '_x', '%20', 'a.b', 'x'.repeat(64))).map(([i, sub, t]) => ({
      method: sub === '/cancel' ? 'POST' : 'GET',
      url: `/v1/workflows/${i}${sub}?tenant_id=${t}`,
      headers: {},
      route: (sub ? sub.slice(1) : 'workflow') as Req['route'],
      badTenantOnly: true,
    })),
    fc.tuple(id, queryString(['tenant_id']), bodyArb, headersArb).map(([i, q, b, h]) => ({ method: 'POST', url: `/v1/workflows/${i}/cancel${q}`, headers: h, body: b.body, route: 'cancel' as const })),
    fc.tuple(fc.constantFrom('/v1/agents', '/v1/stats'), queryString(['tenant_id']), headersArb).map(([p, q, h]) => ({ method: 'GET', url: `${p}${q}`, headers: h, route: (p === '/v1/agents' ? 'agents' : 'stats') as Req['route'] })),
    fc.tuple(fc.constantFrom('PUT', 'DELETE', 'PATCH', 'OPTIONS'), fc.constantFrom('/v1/queries', '/v1/workflows', '/v1/workflows/x', '/v1/stats', '/v1/nope', '/v1/workflows/x/cancel'), bodyArb).map(([m, p, b]) => ({ method: m, url: p, headers: { 'content-type': 'application/json' }, body: b.body, route: 'other' as const })),
  ];
  return fc.oneof(...routes).map((r) => labelled(r, `${r.method} ${r.url.slice(0, 150)} ${JSON.stringify(r.headers).slice(0, 200)} body=${r.body === undefined ? '-' : JSON.stringify(r.body.slice(0, 120))}${(r.body?.length ?? 0) > 120 ? `…(${r.body?.length} chars)` : ''}`));
}

// ---------------------------------------------------------------- the suite

describe('fuzz - HTTP API', () => {
  let f: ChorusFixture;
  let crashes: ReturnType<typeof watchCrashes>;
  /** Workflows that exist: the first has completed. */
  const known: string[] = [];

  beforeAll(async () => {
    crashes = watchCrashes();
    f = await startChorusFixture({ CHORUS_NATS_TIMEOUT_MS: '3000' });
    for (const [query, tenant_id] of [['what does the correlation hub keep', 'default'], ['how does chorus drop duplicates', 'acme'], ['which profiles does the search worker fuse', 'default']]) {
      const r = await postJson(`${f.url}/v1/queries?wait=true`, { query, tenant_id, deadline_ms: 8000 });
      expect(r.body.status).toBe('completed');
      known.push(r.body.correlation_id);
    }
  });
  afterAll(async () => {
    await f?.stop();
    crashes?.stop();
  });

  async function send(r: Req, timeoutMs: number): Promise<Answer> {
    const started = Date.now();
    let res: Response;
    try {
      res = await fetch(`${f.url}${r.url}`, { method: r.method, headers: r.headers, body: r.body, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
    } catch (e) {
      const cause = (e as { cause?: unknown }).cause;
      // fetch refuses some header values itself: that is the client, not Chorus.
      if (e instanceof TypeError && !/fetch failed/.test(e.message)) return { status: 0, contentType: '', text: e.message, json: null, ms: 0 };
      throw new Error(`no answer within ${timeoutMs} ms (or the connection failed): ${String(e)} ${String(cause ?? '')}`);
    }
    const text = await res.text().catch((e) => {
      throw new Error(`the body did not arrive within ${timeoutMs} ms: ${String(e)}`);
    });
    let json: unknown = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = undefined;
    }
    return { status: res.status, contentType: res.headers.get('content-type') ?? '', text, json, ms: Date.now() - started };
  }

  /** The contract every answer keeps, whatever was asked. */
  async function checkAnswer(r: Req, a: Answer): Promise<void> {
    if (a.status === 0) return;
    const what = `${r.method} ${r.url.slice(0, 120)} → ${a.status} ${a.text.slice(0, 300)}`;
    const wait = r.route === 'submit' && /wait(=true|=1|=)?(&|$)/.test(r.url);
    check(a.status < 500 || (a.status === 504 && wait), () => `server error: ${what}`);
    if (a.status === 204) {
      // The one answer without a body: OPTIONS on a route (its methods are in the Allow header).
      check(r.method === 'OPTIONS' && a.text === '', () => `a 204 that is not an OPTIONS answer without a body: ${what}`);
      return;
    }
    if (a.status >= 400) {
      const e = a.json;
      check(
        e && e.statusCode === a.status && typeof e.error === 'string' && e.error.length > 0 && typeof e.message === 'string' && e.message.length > 0,
        () => `error body is not {statusCode, error, message}: ${what}`,
      );
      check(e.errors === undefined || (isFieldErrorList(e.errors) && e.errors.length > 0), () => `errors is not [{field, messages}]: ${what}`);
      if (a.status === 400 && r.route === 'submit' && r.bodyKeys && e.errors) {
        const allowed = new Set(['$', 'Idempotency-Key', 'wait', 'query', ...r.bodyKeys]); // query: the one required field
        const strange = (e.errors as Array<{ field: string }>).filter((x) => !allowed.has(x.field.split('.')[0]));
        check(strange.length === 0, () => `the 400 names fields that were neither sent nor required: ${strange.map((x) => x.field).join(', ')}: ${what}`);
      }
      if (a.status === 400 && r.badTenantOnly) {
        check((e.errors ?? []).some((x: { field: string }) => x.field === 'tenant_id'), () => `an invalid tenant_id with a valid id, but the 400 does not name tenant_id: ${what}`);
      }
      return;
    }
    if (r.route === 'events' && a.status === 200) {
      check(a.contentType.startsWith('text/event-stream'), () => `events answered ${a.contentType}: ${what}`);
      const terminals = a.text.split('\n\n').filter((block) => block.includes('event: terminal'));
      check(terminals.length === 1, () => `the event stream carried ${terminals.length} terminal events: ${what}`);
      return;
    }
    check(a.json !== undefined && a.contentType.includes('application/json'), () => `a ${a.status} whose body is not JSON: ${what}`);
    if (r.route === 'submit' && a.status === 202) {
      const id = a.json.correlation_id as string;
      check(CID_RE.test(id) && a.json.status_url === `/v1/workflows/${id}`, () => `accepted without a usable id: ${what}`);
    }
    if (r.route === 'list' && a.status === 200) {
      check(Array.isArray(a.json.workflows) && (a.json.next_cursor === null || typeof a.json.next_cursor === 'string'), () => `a list without workflows/next_cursor: ${what}`);
    }
  }

  it('HTTP - random bodies, headers, ids and query strings on every route: never a 5xx, never a hang, every 4xx in the error shape, and the server keeps serving', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(requestArb(() => known), { minLength: 1, maxLength: 4 }), async (requests) => {
        const mark = crashes.errors.length;
        for (const r of requests) {
          const wait = r.route === 'submit' && /wait(=true|=1|=)?(&|$)/.test(r.url);
          await checkAnswer(r, await send(r, wait ? 15_000 : 5000));
        }
        const health = await send({ method: 'GET', url: '/health', headers: {}, route: 'other' }, 3000);
        check(health.status === 200, () => `/health answered ${health.status}`);
        const crashed = crashes.since(mark);
        check(crashed.length === 0, () => `the Chorus process had an unhandled rejection or uncaught exception: ${describeCrash(crashed[0])}`);
      }),
      { numRuns: 200, endOnFailure: true },
    );
  }, 120_000);

  it('HTTP - GET /v1/workflows with random filters answers 200 with only matching workflows, newest first, or a 400 naming the filter', async () => {
    const filters = fc.record(
      {
        status: listParam.status,
        agent: listParam.agent,
        since: listParam.since,
        until: listParam.until,
        limit: fc.oneof(fc.integer({ min: 1, max: 3 }).map(String), listParam.limit),
        cursor: listParam.cursor,
        tenant_id: listParam.tenant_id,
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(filters, async (q) => {
        const qs = Object.entries(q).filter(([, v]) => v !== undefined).map(([k, v]) => `${k}=${v}`).join('&');
        const a = await send({ method: 'GET', url: `/v1/workflows?${qs}`, headers: {}, route: 'list' }, 5000);
        const what = `GET /v1/workflows?${qs} → ${a.status} ${a.text.slice(0, 300)}`;
        check(a.status === 200 || a.status === 400, () => what);
        if (a.status === 400) {
          const named = (a.json.errors ?? []).map((e: { field: string }) => e.field);
          const sent = new Set(new URLSearchParams(qs).keys()); // junk like `a&b` adds keys of its own
          check(named.length > 0 && named.every((n: string) => sent.has(n)), () => `the 400 does not name the filters sent: ${what}`);
          return;
        }
        const decoded = Object.fromEntries(Object.entries(q).map(([k, v]) => [k, safeDecode(v as string)]));
        const rows = a.json.workflows as Array<{ status: string; tenant_id: string; agents_involved: string[]; started_at: string; correlation_id: string }>;
        for (const w of rows) {
          check(!decoded.status || w.status === decoded.status, () => `a ${w.status} workflow in ${what}`);
          check(!decoded.tenant_id || w.tenant_id === decoded.tenant_id, () => `tenant ${w.tenant_id} in ${what}`);
          check(!decoded.agent || w.agents_involved.includes(decoded.agent), () => `agents ${w.agents_involved} in ${what}`);
          check(!decoded.since || Date.parse(w.started_at) >= Date.parse(decoded.since), () => `started ${w.started_at} in ${what}`);
          check(!decoded.until || Date.parse(w.started_at) <= Date.parse(decoded.until), () => `started ${w.started_at} in ${what}`);
        }
        const order = rows.map((w) => w.started_at);
        check(order.every((s, i) => i === 0 || order[i - 1] >= s), () => `not newest first: ${what}`);
        if (decoded.limit && /^\d+$/.test(decoded.limit)) check(rows.length <= Number(decoded.limit), () => `more rows than the limit: ${what}`);
        if (a.json.next_cursor && rows.length > 0) {
          const rest = Object.entries(q).filter(([k, v]) => v !== undefined && k !== 'cursor').map(([k, v]) => `${k}=${v}`);
          const next = await send({ method: 'GET', url: `/v1/workflows?${[...rest, `cursor=${a.json.next_cursor}`].join('&')}`, headers: {}, route: 'list' }, 5000);
          check(next.status === 200, () => `the next page: ${next.status} ${next.text.slice(0, 200)} after ${what}`);
          const seen = new Set(rows.map((w) => w.correlation_id));
          const page = next.json.workflows as typeof rows;
          check(page.every((w) => !seen.has(w.correlation_id) && w.started_at <= rows[rows.length - 1].started_at), () => `the next page repeats or precedes the first: ${what}`);
        }
      }),
      { numRuns: 100, endOnFailure: true },
    );
  }, 60_000);

  it('HTTP - the same Idempotency-Key (any printable ASCII) returns the same workflow, with another request it is a 422, and an unprintable one is a 400 naming the header', async () => {
    await fc.assert(
      fc.asyncProperty(fc.stringMatching(/^[!-~]{1,256}$/), fc.stringMatching(/^[ -~]*[ \u0080-\u00ff][ -~]*$/), async (key, bad) => {
        const first = await send({ method: 'POST', url: '/v1/queries', headers: { 'content-type': 'application/json', 'idempotency-key': key }, body: JSON.stringify({ query: 'what is an envelope' }), route: 'submit' }, 5000);
        const again = await send({ method: 'POST', url: '/v1/queries', headers: { 'content-type': 'application/json', 'idempotency-key': key }, body: JSON.stringify({ query: 'what is an envelope' }), route: 'submit' }, 5000);
        check([200, 202].includes(first.status) && again.status === 200 && again.json.correlation_id === first.json.correlation_id, () => `key ${JSON.stringify(key)}: ${first.status} ${first.text} then ${again.status} ${again.text}`);
        const other = await send({ method: 'POST', url: '/v1/queries', headers: { 'content-type': 'application/json', 'idempotency-key': key }, body: JSON.stringify({ query: 'something else' }), route: 'submit' }, 5000);
        check(other.status === 422 && other.json.errors?.[0]?.field === 'Idempotency-Key', () => `key ${JSON.stringify(key)} with another query: ${other.status} ${other.text}`);
        const trimmed = bad.trim();
        if (trimmed.length === 0 || /^[!-~]+$/.test(trimmed)) return; // fetch trims the value; nothing invalid is left
        const rejected = await send({ method: 'POST', url: '/v1/queries', headers: { 'content-type': 'application/json', 'idempotency-key': bad }, body: JSON.stringify({ query: 'x' }), route: 'submit' }, 5000);
        check(rejected.status === 400 && rejected.json.errors?.[0]?.field === 'Idempotency-Key', () => `key ${JSON.stringify(bad)}: ${rejected.status} ${rejected.text}`);
      }),
      { numRuns: 10, endOnFailure: true },
    );
  }, 60_000);

  describe('fuzz - HTTP: minimal reproducers of what fuzzing found', () => {
    const get = (url: string) => send({ method: 'GET', url, headers: {}, route: 'other' }, 5000);

    it('HTTP - GET /v1/workflows?cursor=W10 (a cursor that decodes to JSON but not to a cursor) is a 400 naming cursor, not a 500', async () => {
      const a = await get('/v1/workflows?cursor=W10');
      expect({ status: a.status, fields: a.json?.errors?.map((e: { field: string }) => e.field) }).toEqual({ status: 400, fields: ['cursor'] });
    });

    it('HTTP - GET /v1/workflows?since=2026-334 (ISO 8601 the validator accepts, Date.parse cannot read) is a 400 naming since, not a 500', async () => {
      const a = await get('/v1/workflows?since=2026-334');
      expect({ status: a.status, fields: a.json?.errors?.map((e: { field: string }) => e.field) }).toEqual({ status: 400, fields: ['since'] });
    });

    it('HTTP - POST /v1/queries with a 5 KB body nested 2500 arrays deep is a 400, not a 500', async () => {
      const body = `{"query":"x","deep":${deepText(2500, 'array')}}`;
      const a = await send({ method: 'POST', url: '/v1/queries', headers: { 'content-type': 'application/json' }, body, route: 'submit' }, 5000);
      expect({ status: a.status, text: a.text.slice(0, 200) }).toEqual({ status: 400, text: expect.stringContaining('"errors"') });
    });

    it('HTTP - GET /v1/workflows/:id/events?tenant_id=%20 names tenant_id in its 400, as /v1/workflows/:id does', async () => {
      const a = await get('/v1/workflows/abc/events?tenant_id=%20');
      expect({ status: a.status, fields: a.json?.errors?.map((e: { field: string }) => e.field) }).toEqual({ status: 400, fields: ['tenant_id'] });
    });
  });

  it('HTTP - after the fuzzing, every route still answers and a real query completes', async () => {
    for (const path of ['/health', '/ready', '/v1/agents', '/v1/stats', '/v1/workflows', `/v1/workflows/${known[0]}`, `/v1/workflows/${known[0]}/history`]) {
      const a = await send({ method: 'GET', url: path, headers: {}, route: 'other' }, 5000);
      expect({ path, status: a.status }).toEqual({ path, status: 200 });
    }
    const r = await postJson(`${f.url}/v1/queries?wait=true`, { query: 'how does chorus drop duplicates', deadline_ms: 8000 });
    expect(r.body.status).toBe('completed');
    await waitFor(async () => (await send({ method: 'GET', url: `/v1/workflows/${r.body.correlation_id}/events`, headers: {}, route: 'events' }, 5000)).text.includes('event: terminal'), {
      what: 'the terminal event',
    });
    expect(crashes.errors.map(describeCrash)).toEqual([]);
  }, 30_000);
});
