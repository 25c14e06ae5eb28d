import { startProfileService } from '@chorus/bus';
import { correlationIdForRetry, createEnvelope, parseEnvelope, profileSubject, workflowSubject, type QueryPayload, type WorkflowView } from '@chorus/envelope';
import { waitFor } from '@chorus/testing';
import { getJson, postJson, startChorusFixture, type ChorusFixture } from './chorus.fixture';

const TERMINAL = ['completed', 'failed', 'timed_out', 'cancelled'];

describe('retrying a workflow (orchestration_command retry)', () => {
  let f: ChorusFixture;
  let flaky: { stop(): Promise<void> } | undefined;
  /** The `flaky` profile's backend: down (its searches fail), hanging (they never answer) or up. */
  let backend: 'down' | 'hanging' | 'up' = 'down';

  beforeAll(async () => {
    f = await startChorusFixture({ CHORUS_PROFILES: 'bm25' });
    // A profile whose backend fails until the test brings it back; when up, it answers as bm25 does.
    const forward = async (endpoint: 'search' | 'documents', request: object) =>
      JSON.parse((await f.chorus.bus.nc.request(profileSubject('bm25', endpoint), JSON.stringify(request), { timeout: 5000 })).string());
    flaky = await startProfileService(
      f.chorus.bus,
      {
        name: 'flaky',
        version: '0.0.1',
        description: 'a profile whose backend is down, then back',
        metadata: {},
        search: async (request) => {
          if (backend === 'down') throw new Error('backend down');
          if (backend === 'hanging') return new Promise(() => undefined);
          return { ...(await forward('search', request)), profile: 'flaky' };
        },
        documents: (request) => forward('documents', request),
      },
      f.log,
    );
  });
  afterAll(async () => {
    await flaky?.stop();
    await f?.stop();
  });

  const workflow = async (id: string): Promise<WorkflowView> =>
    waitFor(
      async () => {
        const r = await getJson(`${f.url}/v1/workflows/${id}`);
        return r.status === 200 && TERMINAL.includes(r.body.status) ? (r.body as WorkflowView) : undefined;
      },
      { what: `workflow ${id} to end`, timeoutMs: 15_000 },
    );

  it('retry - a workflow that failed for a lens that was down runs again once it is back: a new workflow, linked both ways, the failed one still failed', async () => {
    const request = { query: 'how does the hub count duplicates', profiles: ['bm25', 'flaky'], require_all: true, top_k: 7, deadline_ms: 8000 };
    const failed = (await postJson(`${f.url}/v1/queries?wait=true`, request)).body as WorkflowView;
    expect({ status: failed.status, error: failed.errors[0]?.error_type }).toEqual({ status: 'failed', error: 'PROFILE_MISSING' });

    backend = 'up';
    const r = await postJson(`${f.url}/v1/workflows/${failed.correlation_id}/retry`, { reason: 'flaky is back' });
    const retryId = correlationIdForRetry('default', failed.correlation_id);
    expect(r.status).toBe(202);
    expect(r.body).toEqual({ correlation_id: retryId, tenant_id: 'default', retry_of: failed.correlation_id, deadline: expect.any(String), status_url: `/v1/workflows/${retryId}` });
    expect(r.headers.get('location')).toBe(`/v1/workflows/${retryId}`);
    // The hub has recorded the retry by the time of the 202: following it at once finds it.
    expect((await getJson(`${f.url}${r.body.status_url}`)).status).toBe(200);
    // The retry's time budget is the original's (8 s), from when the hub applied the command.
    expect(Date.parse(r.body.deadline) - Date.parse(failed.finished_at!)).toBeGreaterThan(8000);

    const retried = await workflow(retryId);
    expect({ status: retried.status, degraded: retried.degraded, retry_of: retried.retry_of, retried_as: retried.retried_as }).toEqual({
      status: 'completed',
      degraded: false,
      retry_of: failed.correlation_id,
      retried_as: null,
    });
    expect([...retried.result!.provenance.profiles_used].sort()).toEqual(['bm25', 'flaky']);
    expect(retried.result!.results).toHaveLength(7);
    expect(retried.deadline).toBe(r.body.deadline);

    // The same request as the first: the query the stream holds for the retry.
    const stored = await f.chorus.bus.lastStored(workflowSubject('default', 'query', retryId));
    const query = parseEnvelope(stored!);
    if (!query.ok) throw query.error;
    expect(query.value.payload as QueryPayload).toEqual({ ...request, deadline_ms: undefined, session_id: null, retry_of: failed.correlation_id } as never);
    expect(query.value.agent).toBe('hub');

    const original = (await getJson(`${f.url}/v1/workflows/${failed.correlation_id}`)).body as WorkflowView;
    expect({ status: original.status, retried_as: original.retried_as, finished_at: original.finished_at }).toEqual({ status: 'failed', retried_as: retryId, finished_at: failed.finished_at });
    expect(original.steps.at(-1)).toEqual(expect.objectContaining({ message_type: 'orchestration_command', agent: 'ingress' }));

    const stats = (await getJson(`${f.url}/v1/stats`)).body;
    expect(stats.totals.retried).toBe(1);
    expect((await fetch(`${f.url}/metrics`).then((m) => m.text())).match(/^chorus_workflows_retried\{app="chorus"\} (\d+)$/m)?.[1]).toBe('1');

    // Asked again: the same retry, nothing new.
    const again = await postJson(`${f.url}/v1/workflows/${failed.correlation_id}/retry`, {});
    expect({ status: again.status, id: again.body.correlation_id, deadline: again.body.deadline }).toEqual({ status: 200, id: retryId, deadline: retried.deadline });
    expect((await getJson(`${f.url}/v1/stats`)).body.totals.retried).toBe(1);
    const list = (await getJson(`${f.url}/v1/workflows?limit=100`)).body as { workflows: Array<{ correlation_id: string }> };
    expect(list.workflows.filter((w) => w.correlation_id === retryId)).toHaveLength(1);
  }, 40_000);

  it('retry - two requests at once for the same workflow start one retry: one 202, one 200, the same id', async () => {
    backend = 'down';
    const failed = (await postJson(`${f.url}/v1/queries?wait=true`, { query: 'what is an envelope', profiles: ['bm25', 'flaky'], require_all: true, deadline_ms: 8000 })).body as WorkflowView;
    expect(failed.status).toBe('failed');
    backend = 'up';
    const both = await Promise.all([1, 2].map(() => postJson(`${f.url}/v1/workflows/${failed.correlation_id}/retry`, {})));
    expect(both.map((r) => r.status).sort()).toEqual([200, 202]);
    expect(new Set(both.map((r) => r.body.correlation_id))).toEqual(new Set([correlationIdForRetry('default', failed.correlation_id)]));
    expect(both[0].body.deadline).toBe(both[1].body.deadline);
    const retried = await workflow(both[0].body.correlation_id);
    expect(retried.status).toBe('completed');
    expect(retried.steps.filter((st) => st.message_type === 'query')).toHaveLength(1);
    const original = (await getJson(`${f.url}/v1/workflows/${failed.correlation_id}`)).body as WorkflowView;
    // Two commands, or one when the second request already saw the retry (it then publishes none).
    expect(original.steps.filter((st) => st.message_type === 'orchestration_command').length).toBeGreaterThanOrEqual(1);
    expect(original.errors.map((e) => e.error_type)).toEqual(['PROFILE_MISSING']);
  }, 40_000);

  it('retry - a workflow that completed with every lens, or has not ended, is a 409 naming why; an unknown one a 404', async () => {
    const done = (await postJson(`${f.url}/v1/queries?wait=true`, { query: 'reciprocal rank fusion', deadline_ms: 8000 })).body as WorkflowView;
    expect(done.status).toBe('completed');
    const r = await postJson(`${f.url}/v1/workflows/${done.correlation_id}/retry`, {});
    expect(r.status).toBe(409);
    expect(r.body).toEqual(expect.objectContaining({ statusCode: 409, status: 'completed', error_type: 'NOT_RETRYABLE', message: expect.stringMatching(/nothing to retry/) }));

    // A lens that hangs keeps the workflow running until the profile's timeout (3 s).
    backend = 'hanging';
    const running = await postJson(`${f.url}/v1/queries`, { query: 'what is the correlation hub', profiles: ['bm25', 'flaky'], deadline_ms: 8000 });
    const id = running.body.correlation_id as string;
    const refused = await postJson(`${f.url}/v1/workflows/${id}/retry`, {});
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual(expect.objectContaining({ error_type: 'NOT_RETRYABLE', status: expect.stringMatching(/^(pending|running)$/), message: expect.stringMatching(/only a workflow that has ended/) }));
    expect(await workflow(id)).toEqual(expect.objectContaining({ status: 'completed', degraded: true, retried_as: null }));

    expect((await postJson(`${f.url}/v1/workflows/no-such-workflow/retry`, {})).status).toBe(404);
    const bad = await postJson(`${f.url}/v1/workflows/${done.correlation_id}/retry`, { reason: 7, force: true });
    expect({ status: bad.status, fields: bad.body.errors?.map((e: { field: string }) => e.field).sort() }).toEqual({ status: 400, fields: ['force', 'reason'] });
    const cancel = await postJson(`${f.url}/v1/workflows/${done.correlation_id}/cancel`, { reason: 7 });
    expect({ status: cancel.status, fields: cancel.body.errors?.map((e: { field: string }) => e.field) }).toEqual({ status: 400, fields: ['reason'] });
  }, 40_000);

  it('retry - a retry command published straight to the bus for a running workflow is recorded as refused, and the workflow ends as it would have', async () => {
    backend = 'hanging';
    const started = await postJson(`${f.url}/v1/queries`, { query: 'dead letters', profiles: ['bm25', 'flaky'], require_all: true, deadline_ms: 8000 });
    const id = started.body.correlation_id as string;
    const command = createEnvelope({ messageType: 'orchestration_command', correlationId: id, tenantId: 'default', agent: 'ops', deadline: new Date(Date.now() + 8000), payload: { command: 'retry', reason: 'raw bus' } });
    await f.chorus.bus.publish(command, { part: `retry-${command.message_id}` });
    const view = await workflow(id);
    expect({ status: view.status, retried_as: view.retried_as }).toEqual({ status: 'failed', retried_as: null });
    expect(view.errors.map((e) => [e.agent, e.error_type])).toEqual([
      ['ops', 'NOT_RETRYABLE'],
      ['search', 'PROFILE_MISSING'],
    ]);
    expect((await getJson(`${f.url}/v1/workflows/${correlationIdForRetry('default', id)}`)).status).toBe(404);
  }, 40_000);
});
