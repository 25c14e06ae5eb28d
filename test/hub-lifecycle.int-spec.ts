import type { DeadLetter } from '@chorus/bus';
import { createEnvelope, type Envelope, type WorkflowView } from '@chorus/envelope';
import { waitFor } from '@chorus/testing';
import { startProfiles } from '../apps/profile/src';
import { startResponder } from '../apps/responder/src';
import { getJson, postJson, startChorusFixture, stopApp, type ChorusFixture } from './chorus.fixture';

/** The workflow lifecycle through the real system: deadlines, cancellation, retries, failures. */
describe('hub lifecycle', () => {
  let f: ChorusFixture;

  beforeEach(async () => {
    // Fast retries so a transient failure recovers well inside a test's deadline.
    f = await startChorusFixture({ CHORUS_RETRY_BASE_MS: '100', CHORUS_RETRY_MAX_MS: '400', CHORUS_MAX_DELIVER: '8', CHORUS_HUB_LINGER_MS: '100' });
  });
  afterEach(async () => {
    await f?.stop();
  });

  async function finished(id: string, timeoutMs = 15_000): Promise<WorkflowView> {
    return waitFor(
      async () => {
        const r = await getJson(`${f.url}/v1/workflows/${id}`);
        return r.status === 200 && ['completed', 'failed', 'timed_out', 'cancelled'].includes(r.body.status) ? (r.body as WorkflowView) : undefined;
      },
      { timeoutMs, what: `workflow ${id} finished` },
    );
  }

  async function history(id: string): Promise<Envelope[]> {
    return (await getJson(`${f.url}/v1/workflows/${id}/history`)).body.envelopes;
  }

  const terminalUpdates = (envelopes: Envelope[]) =>
    envelopes.filter((e) => e.message_type === 'status_update' && e.agent === 'hub').map((e) => (e.payload as { workflow_status: string }).workflow_status);

  it('hub - envelopes of a running workflow that arrive while its write lingers are stored by one write, every step recorded', async () => {
    const metric = async (name: string) => {
      const text = await (await fetch(`${f.url}/metrics`)).text();
      return Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
    };
    // The one hub of this Chorus holds the lease: the replica whose totals to read.
    expect(await metric('chorus_hub_active')).toBe(1);
    const writesBefore = await metric('chorus_hub_ledger_writes_total');
    const storedBefore = await metric('chorus_hub_ledger_transitions_total');
    const views: WorkflowView[] = [];
    for (let i = 0; i < 3; i++) views.push((await postJson(`${f.url}/v1/queries?wait=true`, { query: `how are envelopes stored ${i}` })).body);
    for (const v of views) {
      expect(v.status).toBe('completed');
      expect(v.steps.map((s) => s.message_type)).toEqual(['query', 'classification_result', 'execution_plan', 'tool_results', 'response']);
    }
    const writes = (await metric('chorus_hub_ledger_writes_total')) - writesBefore;
    const stored = (await metric('chorus_hub_ledger_transitions_total')) - storedBefore;
    // Each workflow: five envelopes and the hub's two status updates, in fewer writes than envelopes.
    expect(stored).toBeGreaterThanOrEqual(15);
    expect(writes).toBeLessThan(stored);
    expect(writes).toBeGreaterThanOrEqual(3);
  });

  it('hub - a workflow whose responder is stopped times out at its deadline, once', async () => {
    await stopApp(f, 'responder');
    const submitted = await postJson(`${f.url}/v1/queries`, { query: 'what is a deadline', deadline_ms: 1200 });
    const view = await finished(submitted.body.correlation_id);
    expect(view.status).toBe('timed_out');
    const late = Date.parse(view.finished_at!) - Date.parse(view.deadline);
    expect(late).toBeGreaterThanOrEqual(0);
    expect(late).toBeLessThan(1000);
    expect(view.steps.map((s) => s.message_type)).toEqual(['query', 'classification_result', 'execution_plan', 'tool_results']);
    expect(terminalUpdates(await history(view.correlation_id))).toEqual(['timed_out']);
  });

  it('hub - junk stored on a workflow\'s response subject (dead-lettered) does not hold its timeout back', async () => {
    await stopApp(f, 'responder');
    const submitted = await postJson(`${f.url}/v1/queries`, { query: 'what is a junk response', deadline_ms: 1500 });
    const id = submitted.body.correlation_id as string;
    await waitFor(async () => (await getJson(`${f.url}/v1/workflows/${id}`)).body.steps?.length === 4, { what: 'the tool results recorded' });
    // Stored before the deadline, so it looks like an end the hub has yet to apply; it is not one.
    await f.chorus.bus.js.publish(`chorus.wf.default.response.${id}`, 'not json');
    const view = await finished(id, 10_000);
    // Seen ended within moments of its deadline by the clock (its finished_at is the deadline itself, whenever the hub got to it).
    expect(Date.now() - Date.parse(view.deadline)).toBeLessThan(3000);
    expect(view.status).toBe('timed_out');
    expect(terminalUpdates(await history(id))).toEqual(['timed_out']);
  });

  it('hub - a cancelled workflow stops before the responder', async () => {
    await stopApp(f, 'profiles');
    const submitted = await postJson(`${f.url}/v1/queries`, { query: 'what is cancellation', deadline_ms: 8000 });
    const id = submitted.body.correlation_id as string;
    // The search step is now retrying: its profiles are unavailable.
    await waitFor(async () => (await getJson(`${f.url}/v1/workflows/${id}`)).body.steps?.length === 3, { what: 'the plan recorded' });
    const cancel = await postJson(`${f.url}/v1/workflows/${id}/cancel`, { reason: 'changed my mind' });
    expect(cancel.status).toBe(202);
    const view = await finished(id);
    expect(view.status).toBe('cancelled');
    // The profiles come back: the search step must still not run for a cancelled workflow.
    f.chorus.components.push(await startProfiles(f.chorus.bus, f.config, f.log));
    await new Promise((r) => setTimeout(r, 1500));
    const types = (await history(id)).map((e) => e.message_type);
    expect(types).not.toContain('tool_results');
    expect(types).not.toContain('response');
    expect(terminalUpdates(await history(id))).toEqual(['cancelled']);
    const again = await postJson(`${f.url}/v1/workflows/${id}/cancel`, {});
    expect(again.status).toBe(409);
  });

  it('hub - a transient error is retried with backoff, keeping its idempotency key, and the workflow completes', async () => {
    await stopApp(f, 'profiles');
    const submitted = await postJson(`${f.url}/v1/queries`, { query: 'how are retries done', deadline_ms: 8000 });
    const id = submitted.body.correlation_id as string;
    await new Promise((r) => setTimeout(r, 600));
    f.chorus.components.push(await startProfiles(f.chorus.bus, f.config, f.log));
    const view = await finished(id);
    expect(view.status).toBe('completed');
    const search = view.steps.find((s) => s.message_type === 'tool_results')!;
    expect(search.attempt).toBeGreaterThan(1);
    expect(search.step).toBe(`${id}.tool_results.search`);
    expect((await history(id)).filter((e) => e.message_type === 'tool_results')).toHaveLength(1);
  });

  it('hub - a permanent error fails the workflow, naming the agent, the step and the cause, and dead-letters the envelope', async () => {
    const letters: DeadLetter[] = [];
    const sub = f.chorus.bus.nc.subscribe('chorus.dlq.>', { callback: (_e, m) => void letters.push(m.json<DeadLetter>()) });
    const submitted = await postJson(`${f.url}/v1/queries`, { query: 'profile:bm25' });
    const view = await finished(submitted.body.correlation_id);
    expect(view.status).toBe('failed');
    expect(view.errors).toEqual([expect.objectContaining({ agent: 'intent', step: 'query', error_type: 'EMPTY_SEARCH_TEXT', retry_possible: false })]);
    await waitFor(() => letters.some((l) => l.correlation_id === view.correlation_id), { what: 'the dead letter' });
    sub.unsubscribe();
    expect(letters.find((l) => l.correlation_id === view.correlation_id)).toEqual(
      expect.objectContaining({ reason: 'step_failed', consumer: 'intent_query', error: expect.objectContaining({ error_type: 'EMPTY_SEARCH_TEXT' }) }),
    );
    expect(terminalUpdates(await history(view.correlation_id))).toEqual(['failed']);
  });

  it('hub - a late envelope is recorded once, counted, and never changes a terminal state', async () => {
    const done = await postJson(`${f.url}/v1/queries?wait=true`, { query: 'what is a late envelope' });
    expect(done.body.status).toBe('completed');
    const id = done.body.correlation_id as string;
    const late = createEnvelope({
      messageType: 'orchestration_command',
      correlationId: id,
      tenantId: 'default',
      agent: 'test-client',
      deadline: done.body.deadline,
      payload: { command: 'cancel', reason: 'too late' },
    });
    await f.chorus.bus.publish(late, { part: 'cancel' });
    await f.chorus.bus.js.publish(`chorus.wf.default.orchestration_command.${id}`, JSON.stringify(late)); // again, stored twice
    const view = await waitFor(
      async () => {
        const r = (await getJson(`${f.url}/v1/workflows/${id}`)).body as WorkflowView;
        return r.late_envelopes === 1 && r.duplicates_dropped === 1 ? r : undefined;
      },
      { what: 'one late envelope and one duplicate' },
    );
    expect(view.status).toBe('completed');
    const stats = await waitFor(async () => {
      const s = (await getJson(`${f.url}/v1/stats`)).body;
      return s.totals.late_envelopes === 1 && s.totals.duplicates_dropped === 1 ? s : undefined;
    });
    expect(stats.totals.completed).toBe(1);
    expect(stats.totals.cancelled).toBe(0);
  });

  it('hub - status updates and commands of a workflow nobody submitted are left out of the ledger, counted, not listed as workflows', async () => {
    const metric = async (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(await (await fetch(`${f.url}/metrics`)).text())?.[1]);
    const before = await metric('chorus_hub_unknown_workflow_envelopes_total');
    expect(Number.isFinite(before)).toBe(true);
    const deadline = new Date(Date.now() + 60_000).toISOString();
    const stray = (messageType: 'orchestration_command' | 'status_update', payload: object, failed = false): Envelope => {
      const e = createEnvelope({ messageType, correlationId: `stray-${messageType}-${failed ? 'error' : 'success'}`, tenantId: 'default', agent: 'test-client', deadline, payload: payload as never });
      return failed ? { ...e, status: 'error', error_details: { error_type: 'BOOM', error_message: 'failed', retry_possible: false } } : e;
    };
    const strays = [
      stray('orchestration_command', { command: 'cancel', reason: 'never submitted' }),
      stray('status_update', { workflow_status: 'running', previous_status: 'pending', step: null, reason: 'made up' }),
      stray('status_update', { workflow_status: 'failed', previous_status: 'running', step: null, reason: 'made up' }, true),
      // Its query is in the stream, but invalid (dead-lettered): never to be recorded, so nothing to wait for.
      { ...stray('orchestration_command', { command: 'cancel', reason: 'query refused' }), correlation_id: 'stray-bad-query' },
    ];
    await f.chorus.bus.js.publish('chorus.wf.default.query.stray-bad-query', '{"message_type":"query"}');
    for (const e of strays) await f.chorus.bus.publish(e);
    // A real workflow after them: once it is recorded, the hub has handled every stray before it.
    const done = await postJson(`${f.url}/v1/queries?wait=true`, { query: 'what is a stray envelope' });
    expect(done.body.status).toBe('completed');
    expect(await metric('chorus_hub_unknown_workflow_envelopes_total')).toBe(before + strays.length);
    // Unknown, the one whose stored query was refused (dead-lettered, never to be recorded) included: not "not recorded yet".
    for (const e of strays) expect([e.correlation_id, (await getJson(`${f.url}/v1/workflows/${e.correlation_id}`)).status]).toEqual([e.correlation_id, 404]);
    // Its event stream too (it sent heartbeats for ever, waiting for a record).
    const events = await fetch(`${f.url}/v1/workflows/stray-bad-query/events`, { signal: AbortSignal.timeout(10_000) });
    expect(events.status).toBe(404);
    const list = (await getJson(`${f.url}/v1/workflows`)).body as { workflows: Array<{ correlation_id: string }> };
    expect(list.workflows.map((w) => w.correlation_id)).toEqual([done.body.correlation_id]);
    const totals = (await getJson(`${f.url}/v1/stats`)).body.totals;
    expect({ active: totals.active, failed: totals.failed, cancelled: totals.cancelled, completed: totals.completed }).toEqual({ active: 0, failed: 0, cancelled: 0, completed: 1 });
  });

  it('hub - lists workflows with filters and pagination, and reports totals and per-agent statistics', async () => {
    await stopApp(f, 'responder');
    await postJson(`${f.url}/v1/queries`, { query: 'this one times out', deadline_ms: 300 });
    await waitFor(async () => (await getJson(`${f.url}/v1/workflows?status=timed_out`)).body.workflows.length === 1, { what: 'the timeout listed' });
    f.chorus.components.push(await startResponder(f.chorus.bus, f.config, f.log));
    const ids: string[] = [];
    for (const q of ['list one', 'list two', 'list three']) ids.push((await postJson(`${f.url}/v1/queries?wait=true`, { query: q })).body.correlation_id);

    const page1 = await getJson(`${f.url}/v1/workflows?status=completed&limit=2`);
    expect(page1.status).toBe(200);
    expect(page1.body.workflows).toHaveLength(2);
    expect(page1.body.next_cursor).toEqual(expect.any(String));
    const page2 = await getJson(`${f.url}/v1/workflows?status=completed&limit=2&cursor=${page1.body.next_cursor}`);
    expect(page2.body.workflows).toHaveLength(1);
    expect(page2.body.next_cursor).toBeNull();
    const listed = [...page1.body.workflows, ...page2.body.workflows].map((w: { correlation_id: string }) => w.correlation_id);
    expect(listed).toEqual([...ids].reverse());
    const byAgent = await getJson(`${f.url}/v1/workflows?agent=responder`);
    expect(byAgent.body.workflows).toHaveLength(3);
    const bad = await getJson(`${f.url}/v1/workflows?status=sleeping&limit=0`);
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['limit', 'status']);

    const stats = (await getJson(`${f.url}/v1/stats`)).body;
    expect(stats.totals).toEqual(expect.objectContaining({ created: 4, completed: 3, timed_out: 1, active: 0, failed: 0, cancelled: 0 }));
    const search = stats.agents.find((a: { agent: string }) => a.agent === 'search');
    expect(search).toEqual(expect.objectContaining({ count: 4, errors: 0, error_rate: 0 }));
    expect(search.p50_ms).toEqual(expect.any(Number));
    expect(search.p99_ms).toBeGreaterThanOrEqual(search.p50_ms);
  });
});
