import { ChorusClient } from '@chorus/bus';
import { HubSubjects, createEnvelope, type WorkflowView } from '@chorus/envelope';
import { waitFor } from '@chorus/testing';
import { getJson, postJson, startChorusFixture, stopApp, type ChorusFixture } from './chorus.fixture';
import { startApp, type AppProcess } from './processes';

/**
 * What keeps the hub's work bounded on a large ledger: lists come from its recent index only (never
 * a scan of the whole bucket), and no workflow runs past the longest deadline, which is what lets a
 * hub that takes over read only the recent part of the ledger.
 */
describe('hub at scale', () => {
  let f: ChorusFixture;

  beforeAll(async () => {
    f = await startChorusFixture({ CHORUS_HUB_RECENT: '10', CHORUS_MAX_DEADLINE_MS: '1500', CHORUS_DEFAULT_DEADLINE_MS: '1500' });
  });
  afterAll(async () => {
    await f?.stop();
  });

  it('hub list - past the recent index the list stops and says it is not complete; an older workflow is still found by id', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const done = await postJson(`${f.url}/v1/queries?wait=true`, { query: `how is the list bounded ${i}` });
      expect(done.body.status).toBe('completed');
      ids.push(done.body.correlation_id);
    }
    const list = (await getJson(`${f.url}/v1/workflows?limit=50`)).body;
    expect(list.workflows.map((w: { correlation_id: string }) => w.correlation_id)).toEqual(ids.slice(2).reverse());
    expect(list.complete).toBe(false);
    expect(list.next_cursor).toBeNull();
    // A page that the index fills is complete as far as it goes: there is a next page.
    const page = (await getJson(`${f.url}/v1/workflows?limit=4`)).body;
    expect(page.workflows).toHaveLength(4);
    expect(page.complete).toBe(true);
    expect(page.next_cursor).toEqual(expect.any(String));
    expect((await getJson(`${f.url}/v1/workflows/${ids[0]}`)).body.status).toBe('completed');
  });

  it('hub list - since and until follow the rule of the HTTP API and the CLI, for a client on the bus too: a time without its zone is refused', async () => {
    const client = new ChorusClient(f.chorus.bus, { agent: 'test-client', correlation: f.config.correlation, defaultDeadlineMs: 1500, defaultTopK: 5, requestTimeoutMs: 5000, terminalGraceMs: 1000 });
    const refused = await client.list({ since: '2026-12-01 15:00', until: '2026-334' }).catch((e: { code?: string; fields?: unknown }) => e);
    expect(refused).toMatchObject({
      code: 'BAD_REQUEST',
      fields: [
        { field: 'since', messages: ['since must be an RFC 3339 date-time (2026-11-30T10:30:00Z) or a date (2026-11-30)'] },
        { field: 'until', messages: ['until must be an RFC 3339 date-time (2026-11-30T10:30:00Z) or a date (2026-11-30)'] },
      ],
    });
    expect((await client.list({ since: '2026-11-30', until: '2099-01-01T00:00:00+01:00' })).workflows).toBeInstanceOf(Array);
  });

  it('hub list and stats - a field they do not take (a misspelt tenant_id), or a body that is no object, is refused naming it, not read as "every tenant"', async () => {
    const client = new ChorusClient(f.chorus.bus, { agent: 'test-client', correlation: f.config.correlation, defaultDeadlineMs: 1500, defaultTopK: 5, requestTimeoutMs: 5000, terminalGraceMs: 1000 });
    const listed = await client.list({ tennant_id: 'nobody' } as never).catch((e: { code?: string; fields?: unknown }) => e);
    expect(listed).toMatchObject({ code: 'BAD_REQUEST', fields: [{ field: 'tennant_id', messages: [expect.stringMatching(/^tennant_id is not a field of this request \(fields: tenant_id, status, agent/)] }] });
    const ask = async (subject: string, body: string) => (await f.chorus.bus.nc.request(subject, body, { timeout: 5000 })).json<{ ok: boolean; error?: { code: string; fields: Array<{ field: string }> } }>();
    for (const subject of [HubSubjects.List, HubSubjects.Stats]) {
      expect(await ask(subject, 'null')).toMatchObject({ ok: false, error: { code: 'BAD_REQUEST', fields: [{ field: '$' }] } });
      expect(await ask(subject, '"s"')).toMatchObject({ ok: false, error: { code: 'BAD_REQUEST', fields: [{ field: '$' }] } });
      expect(await ask(subject, '{}')).toMatchObject({ ok: true });
    }
    expect(await ask(HubSubjects.Stats, '{"tenant":"acme"}')).toMatchObject({ ok: false, error: { code: 'BAD_REQUEST', fields: [{ field: 'tenant' }] } });
  });

  it('hub deadline - a query published with a deadline past CHORUS_MAX_DEADLINE_MS is timed out at the longest deadline', async () => {
    await stopApp(f, 'responder');
    const started = Date.now();
    const envelope = createEnvelope({
      messageType: 'query',
      correlationId: 'far-deadline-1',
      tenantId: 'default',
      agent: 'test-client',
      deadline: new Date(started + 3_600_000),
      payload: { query: 'how long may a workflow run', top_k: 5, require_all: false },
    });
    await f.chorus.bus.publish(envelope);
    // While it runs, its record shows the deadline it is held to, which watchers time their waits by.
    const running = await waitFor(async () => {
      const r = await getJson(`${f.url}/v1/workflows/far-deadline-1`);
      return r.status === 200 ? (r.body as WorkflowView) : undefined;
    });
    expect(running.status).not.toBe('timed_out');
    expect(Date.parse(running.deadline)).toBe(Date.parse(running.started_at) + 1500);
    const view = await waitFor(
      async () => {
        const r = await getJson(`${f.url}/v1/workflows/far-deadline-1`);
        return r.status === 200 && r.body.status !== 'running' && r.body.status !== 'pending' ? (r.body as WorkflowView) : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 100, what: 'the far-deadline workflow finished' },
    );
    expect(view.status).toBe('timed_out');
    expect(Date.parse(view.finished_at!) - Date.parse(view.started_at)).toBeLessThan(4000);
  });
});

describe('hub takeover on a ledger older than the longest deadline', () => {
  const env = { CHORUS_HUB_RECENT: '50', CHORUS_MAX_DEADLINE_MS: '1000', CHORUS_DEFAULT_DEADLINE_MS: '1000', CHORUS_HUB_CLOCK_SKEW_MS: '0', CHORUS_HUB_LEASE_MS: '1000' };
  let f: ChorusFixture;
  let hub: AppProcess | undefined;

  beforeAll(async () => {
    f = await startChorusFixture(env);
  });
  afterAll(async () => {
    await hub?.stop('SIGKILL');
    await f?.stop();
  });

  it('hub takeover - reads only the records of the longest deadline, serves, then lists the older workflows again, complete', async () => {
    const submit = async (query: string) => {
      const done = await postJson(`${f.url}/v1/queries?wait=true`, { query });
      expect(done.body.status).toBe('completed');
      return done.body.correlation_id as string;
    };
    const older: string[] = [];
    for (let i = 0; i < 6; i++) older.push(await submit(`what does the hub keep ${i}`));
    // Past the longest deadline (and no clock skew allowed): outside the next hub's takeover read.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const newer = [await submit('what does the hub keep now'), await submit('what does the hub keep later')];

    await stopApp(f, 'hub');
    hub = startApp('hub', { NATS_URL: f.nats.url, CHORUS_LOG_LEVEL: 'info', ...env });
    const activated = await hub.waitFor(/"read":(\d+),"whole_ledger":false[^\n]*hub active/);
    expect(Number(activated[1])).toBe(2);
    const filled = await hub.waitFor(/"read":(\d+),"listed":(\d+),"complete":(true|false)[^\n]*recent index filled/);
    expect(filled.slice(1)).toEqual(['6', '8', 'true']);

    // The fill may end before the new hub serves lists (it starts consuming first): 503 until then.
    const list = await waitFor(
      async () => {
        const reply = await getJson(`${f.url}/v1/workflows?limit=50`);
        return reply.status === 200 ? reply.body : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 50, what: 'the new hub answering lists' },
    );
    expect(list.workflows.map((w: { correlation_id: string }) => w.correlation_id)).toEqual([...older, ...newer].reverse());
    expect(list.complete).toBe(true);
  });
});
