import { createEnvelope } from '@chorus/envelope';
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

    // A command for it now (its query still in the stream, but older than the ledger keeps) is left
    // out: it brings back no workflow, and is not held back waiting for a record that will not come.
    const metric = async () => Number(/^chorus_hub_unknown_workflow_envelopes_total(?:\{[^}]*\})? (\S+)$/m.exec(await (await fetch(`${f.url}/metrics`)).text())?.[1]);
    const before = await metric();
    expect(Number.isFinite(before)).toBe(true);
    const cancel = createEnvelope({ messageType: 'orchestration_command', correlationId: id, tenantId: 'default', agent: 'test-client', deadline: new Date(Date.now() + 60_000), payload: { command: 'cancel', reason: 'too late' } });
    await f.chorus.bus.publish(cancel);
    await waitFor(async () => (await metric()) === before + 1, { what: 'the late cancel left out' });
    expect((await getJson(`${f.url}/v1/workflows/${id}`)).status).toBe(404);
  });
});
