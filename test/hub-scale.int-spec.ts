import { createEnvelope, type WorkflowView } from '@chorus/envelope';
import { waitFor } from '@chorus/testing';
import { getJson, postJson, startChorusFixture, stopApp, type ChorusFixture } from './chorus.fixture';

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
