import { confirmEnded, readWorkflowHistory, watchWorkflow, type WorkflowEvent } from '@chorus/bus';
import { HubSubjects, newMessageId } from '@chorus/envelope';
import { waitFor } from '@chorus/testing';
import { getJson, postJson, startChorusFixture, type ChorusFixture } from './chorus.fixture';
import { readSse } from './sse';

describe('many watchers of one workflow', () => {
  let f: ChorusFixture;

  beforeAll(async () => {
    // No planner: a workflow runs until it is cancelled.
    f = await startChorusFixture({}, {}, ['hub', 'ingress', 'intent']);
  });
  afterAll(async () => {
    await f?.stop();
  });

  it('confirmEnded - watchers asking the hub at the same moment share one read of the ledger', async () => {
    const id = (await postJson(`${f.url}/v1/queries`, { query: 'how many asked', deadline_ms: 60_000 })).body.correlation_id as string;
    await postJson(`${f.url}/v1/workflows/${id}/cancel`, {});
    const requests = f.chorus.bus.nc.subscribe(HubSubjects.Workflow);
    let asked = 0;
    void (async () => {
      for await (const _ of requests) asked++;
    })();
    await f.chorus.bus.nc.flush();
    const views = await Promise.all(Array.from({ length: 200 }, () => confirmEnded(f.chorus.bus, 'default', id)));
    await f.chorus.bus.nc.flush();
    requests.unsubscribe();
    expect(views.every((v) => v?.status === 'cancelled')).toBe(true);
    // Two: the first read may find the cancel not yet saved.
    expect(asked).toBeLessThanOrEqual(2);
  });

  it('watchWorkflow - a re-publish the stream dropped as a duplicate (same idempotency key, another message_id) is no step', async () => {
    const id = (await postJson(`${f.url}/v1/queries`, { query: 'what is heard twice', deadline_ms: 60_000 })).body.correlation_id as string;
    const stored = await waitFor(async () => (await readWorkflowHistory(f.chorus.bus, id, { tenantId: 'default' })).find((e) => e.subject.includes('.classification_result.')));
    const events: WorkflowEvent[] = [];
    const watching = (async () => {
      for await (const event of watchWorkflow(f.chorus.bus, 'default', id, { since: new Date(Date.now() - 60_000) })) events.push(event);
    })();
    await waitFor(() => events.some((e) => e.kind === 'envelope' && e.envelope.message_type === 'classification_result'), { what: 'the watch to replay the stored steps' });
    // What a redelivered intent (or anyone) publishing the same step again looks like on the wire.
    const again = { ...(stored.envelope as object), message_id: newMessageId() };
    const ack = await f.chorus.bus.js.publish(stored.subject, JSON.stringify(again), { msgID: stored.idempotency_key });
    expect({ key: stored.idempotency_key, duplicate: ack.duplicate }).toEqual({ key: `${id}.classification_result.intent`, duplicate: true });
    await f.chorus.bus.nc.flush();
    await postJson(`${f.url}/v1/workflows/${id}/cancel`, {});
    await watching;
    const steps = events.flatMap((e) => (e.kind === 'envelope' ? [e.envelope.message_id] : []));
    expect(steps).not.toContain(again.message_id);
    expect(events.filter((e) => e.kind === 'envelope' && e.envelope.message_type === 'classification_result')).toHaveLength(1);
    expect(events[events.length - 1]).toEqual(expect.objectContaining({ kind: 'terminal', status: 'cancelled' }));
  });

  it('SSE - 300 streams on one workflow, opened while it runs and while it is cancelled, each end with its one terminal event', async () => {
    const id = (await postJson(`${f.url}/v1/queries`, { query: 'who is watching', deadline_ms: 60_000 })).body.correlation_id as string;
    const streams = [];
    for (let i = 0; i < 300; i++) {
      streams.push(readSse(`${f.url}/v1/workflows/${id}/events`, {}, 30_000));
      if (i === 150) void postJson(`${f.url}/v1/workflows/${id}/cancel`, {});
      if (i % 25 === 0) await new Promise((r) => setTimeout(r, 5));
    }
    const ended = await Promise.all(streams);
    const terminals = ended.map((s) => s.events.filter((e) => e.event === 'terminal').map((e) => e.data.status));
    expect(terminals.filter((t) => t.length !== 1 || t[0] !== 'cancelled')).toEqual([]);
    expect((await getJson(`${f.url}/v1/workflows/${id}`)).body.status).toBe('cancelled');
  });
});
