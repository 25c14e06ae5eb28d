import { postJson, startChorusFixture, type ChorusFixture } from './chorus.fixture';

describe('POST /v1/queries - bad bodies', () => {
  let f: ChorusFixture;

  beforeAll(async () => {
    f = await startChorusFixture();
  });
  afterAll(async () => {
    await f?.stop();
  });

  const fieldsOf = (body: { errors?: Array<{ field: string }> }) => (body.errors ?? []).map((e) => e.field);

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

  it('POST /v1/queries - 400 naming query when it is longer than the limit', async () => {
    const r = await postJson(`${f.url}/v1/queries`, { query: 'x'.repeat(4001) });
    expect(r.status).toBe(400);
    expect(r.body.errors[0].field).toBe('query');
    expect(r.body.errors[0].messages[0]).toMatch(/4000/);
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
  });

  it('POST /v1/queries - 415 for a body that is not JSON', async () => {
    const res = await fetch(`${f.url}/v1/queries`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hello' });
    expect(res.status).toBe(415);
  });

  it('POST /v1/queries - 400 for a wait parameter that is not a boolean', async () => {
    const r = await postJson(`${f.url}/v1/queries?wait=maybe`, { query: 'hello' });
    expect(r.status).toBe(400);
    expect(fieldsOf(r.body)).toEqual(['wait']);
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
