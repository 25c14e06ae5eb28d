import { waitFor } from '@chorus/testing';
import { getJson, postJson, startChorusFixture, type ChorusFixture } from './chorus.fixture';

describe('hub retention', () => {
  let f: ChorusFixture;

  beforeAll(async () => {
    f = await startChorusFixture({ CHORUS_MAX_DEADLINE_MS: '1500', CHORUS_DEFAULT_DEADLINE_MS: '1500', CHORUS_HUB_RETENTION_MS: '2500' });
  });
  afterAll(async () => {
    await f?.stop();
  });

  it('hub retention - a finished workflow expires from the ledger and the list after the configured time', async () => {
    const done = await postJson(`${f.url}/v1/queries?wait=true`, { query: 'how long are workflows kept' });
    expect(done.body.status).toBe('completed');
    const id = done.body.correlation_id as string;
    expect((await getJson(`${f.url}/v1/workflows/${id}`)).status).toBe(200);
    expect((await getJson(`${f.url}/v1/workflows`)).body.workflows.map((w: { correlation_id: string }) => w.correlation_id)).toContain(id);
    await waitFor(async () => (await getJson(`${f.url}/v1/workflows/${id}`)).status === 404, { timeoutMs: 8000, intervalMs: 250, what: 'the workflow expired' });
    expect((await getJson(`${f.url}/v1/workflows`)).body.workflows).toEqual([]);
    // The audit trail lives longer, in the workflow stream; the totals still count it.
    expect((await getJson(`${f.url}/v1/stats`)).body.totals.completed).toBe(1);
  });
});
