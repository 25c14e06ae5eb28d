import { createEnvelope, type Envelope, type WorkflowView } from '@chorus/envelope';
import { waitFor } from '@chorus/testing';
import { getJson, startChorusFixture, type ChorusFixture } from './chorus.fixture';

describe('duplicates', () => {
  let f: ChorusFixture;

  beforeAll(async () => {
    f = await startChorusFixture({ CHORUS_HUB_CACHE_SIZE: '10' });
  });
  afterAll(async () => {
    await f?.stop();
  });

  async function completed(id: string): Promise<WorkflowView> {
    return waitFor(
      async () => {
        const r = await getJson(`${f.url}/v1/workflows/${id}`);
        return r.status === 200 && r.body.status === 'completed' ? (r.body as WorkflowView) : undefined;
      },
      { what: `workflow ${id} completed` },
    );
  }

  function query(correlationId: string): Envelope<'query'> {
    return createEnvelope({
      messageType: 'query',
      correlationId,
      tenantId: 'default',
      agent: 'test-client',
      deadline: new Date(Date.now() + 10_000),
      payload: { query: 'how are duplicates counted', top_k: 5, require_all: false },
    });
  }

  it('duplicates - a re-published envelope produces no second downstream envelope, and the hub counts one dropped duplicate', async () => {
    const envelope = query('dup-wf-1');
    const first = await f.chorus.bus.publish(envelope);
    expect(first.duplicate).toBe(false);
    await completed('dup-wf-1');

    const again = await f.chorus.bus.publish(envelope);
    expect(again.duplicate).toBe(true);

    const view = await waitFor(
      async () => {
        const r = await getJson(`${f.url}/v1/workflows/dup-wf-1`);
        return r.body.duplicates_dropped >= 1 ? (r.body as WorkflowView) : undefined;
      },
      { what: 'the duplicate counted' },
    );
    // Give any (wrong) second round of processing time to show up before counting.
    await new Promise((r) => setTimeout(r, 300));
    const history = (await getJson(`${f.url}/v1/workflows/dup-wf-1/history`)).body.envelopes as Envelope[];
    const count = (type: string) => history.filter((e) => e.message_type === type).length;
    expect(count('query')).toBe(1);
    expect(count('classification_result')).toBe(1);
    expect(count('response')).toBe(1);
    expect((await getJson(`${f.url}/v1/workflows/dup-wf-1`)).body.duplicates_dropped).toBe(1);
    expect(view.status).toBe('completed');
  });

  it('duplicates - an envelope stored twice (published without Nats-Msg-Id) is recorded once by the hub', async () => {
    const envelope = query('dup-wf-2');
    await f.chorus.bus.publish(envelope);
    await completed('dup-wf-2');
    const created = async () => ((await getJson(`${f.url}/v1/stats`)).body as { totals: { created: number } }).totals.created;
    const createdBefore = await created();
    // A raw client that sets no Nats-Msg-Id: the stream stores the copy; the hub must drop it.
    await f.chorus.bus.js.publish('chorus.wf.default.query.dup-wf-2', JSON.stringify(envelope));
    const view = await waitFor(
      async () => {
        const r = await getJson(`${f.url}/v1/workflows/dup-wf-2`);
        return r.body.duplicates_dropped >= 1 ? (r.body as WorkflowView) : undefined;
      },
      { what: 'the duplicate counted' },
    );
    expect(view.status).toBe('completed');
    expect(view.steps.filter((s) => s.message_type === 'query')).toHaveLength(1);
    expect(view.steps.filter((s) => s.message_type === 'response')).toHaveLength(1);
    expect(await created()).toBe(createdBefore);
  });

  it('duplicates - one submission from two clients at once (one workflow id, each client under its own key) is one workflow with one query step', async () => {
    const fromHttp = query('dup-wf-4');
    const fromCli = { ...query('dup-wf-4'), agent: 'cli' };
    const [a, b] = await Promise.all([f.chorus.bus.publish(fromHttp), f.chorus.bus.publish(fromCli)]);
    // Different keys: the stream stores both; the hub must run one workflow.
    expect([a.duplicate, b.duplicate]).toEqual([false, false]);
    await completed('dup-wf-4');
    const view = await waitFor(
      async () => {
        const r = await getJson(`${f.url}/v1/workflows/dup-wf-4`);
        return r.body.duplicates_dropped >= 1 ? (r.body as WorkflowView) : undefined;
      },
      { what: 'the second query counted as a duplicate' },
    );
    await new Promise((r) => setTimeout(r, 300));
    const history = (await getJson(`${f.url}/v1/workflows/dup-wf-4/history`)).body.envelopes as Envelope[];
    expect(history.filter((e) => e.message_type === 'query')).toHaveLength(2);
    expect(history.filter((e) => e.message_type === 'response')).toHaveLength(1);
    const final = (await getJson(`${f.url}/v1/workflows/dup-wf-4`)).body as WorkflowView;
    expect(final.steps.filter((s) => s.message_type === 'query')).toHaveLength(1);
    expect(final.status).toBe('completed');
    expect(view.steps.filter((s) => s.message_type === 'response')).toHaveLength(1);
  });

  it('duplicates - a query stored again for a workflow the hub no longer has cached is still one workflow', async () => {
    const envelope = query('dup-wf-3');
    await f.chorus.bus.publish(envelope);
    await completed('dup-wf-3');
    const created = async () => ((await getJson(`${f.url}/v1/stats`)).body as { totals: { created: number } }).totals.created;
    const createdBefore = await created();
    // Fill the hub's cache (CHORUS_HUB_CACHE_SIZE=10 here) so the record must come from the bucket.
    await Promise.all(Array.from({ length: 12 }, (_, i) => f.chorus.bus.publish(query(`dup-fill-${i}`))));
    await Promise.all(Array.from({ length: 12 }, (_, i) => completed(`dup-fill-${i}`)));
    await f.chorus.bus.js.publish('chorus.wf.default.query.dup-wf-3', JSON.stringify(envelope));
    const view = await waitFor(
      async () => {
        const r = await getJson(`${f.url}/v1/workflows/dup-wf-3`);
        return r.body.duplicates_dropped >= 1 ? (r.body as WorkflowView) : undefined;
      },
      { what: 'the duplicate counted' },
    );
    expect(view.status).toBe('completed');
    expect(view.steps.filter((s) => s.message_type === 'query')).toHaveLength(1);
    expect(await created()).toBe(createdBefore + 12);
  });
});
