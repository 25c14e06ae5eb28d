import { ChorusClient, LeaderLease, readWorkflowHistory } from '@chorus/bus';
import { createRootLogger } from '@chorus/observability';
import { createEnvelope, deriveEnvelope, isTerminalStatus, type Envelope, type WorkflowView } from '@chorus/envelope';
import { waitFor } from '@chorus/testing';
import { startPlanner } from '../apps/planner/src';
import { startResponder } from '../apps/responder/src';
import { getJson, startChorusFixture, stopApp, type ChorusFixture } from './chorus.fixture';
import { startApp, type AppProcess } from './processes';

/** A responder's answer to a submitted workflow, published by the test in its place. */
function answerOf(submitted: { correlation_id: string; deadline: string }, query: string, answer: string): Envelope {
  return createEnvelope({
    messageType: 'response',
    correlationId: submitted.correlation_id,
    tenantId: 'default',
    agent: 'responder',
    deadline: submitted.deadline,
    payload: { query, answer, results: [], provenance: { sources: [], profiles_used: [], degraded: [], fusion: { k: 60, rank_window: 100 }, method: 'test' } },
  });
}

/** The hub as its own processes, killed with SIGKILL under load. */
describe('hub failover', () => {
  let f: ChorusFixture;
  let client: ChorusClient;
  const hubs: AppProcess[] = [];

  beforeEach(async () => {
    f = await startChorusFixture({}, {}, ['profiles', 'intent', 'planner', 'search', 'responder', 'ingress']);
    client = new ChorusClient(f.chorus.bus, {
      agent: 'test-client',
      correlation: f.config.correlation,
      defaultDeadlineMs: 15_000,
      defaultTopK: 5,
      requestTimeoutMs: 5000,
      terminalGraceMs: 1000,
    });
  });
  afterEach(async () => {
    await Promise.all(hubs.splice(0).map((h) => h.stop('SIGKILL')));
    await f?.stop();
  });

  function startHub(env: Record<string, string> = {}): AppProcess {
    const hub = startApp('hub', { NATS_URL: f.nats.url, CHORUS_LOG_LEVEL: process.env.CHORUS_TEST_HUB_LOG_LEVEL ?? 'info', CHORUS_HUB_LEASE_MS: '1000', ...env });
    hubs.push(hub);
    return hub;
  }

  /** Two hub replicas, once one of them holds the lease. */
  async function startTwoHubs(): Promise<{ active: AppProcess; standby: AppProcess }> {
    const [a, b] = [startHub(), startHub()];
    await Promise.all([a.waitFor(/hub ready/), b.waitFor(/hub ready/)]);
    await waitFor(() => a.output().includes('lease acquired') || b.output().includes('lease acquired'), { what: 'an active hub' });
    const active = a.output().includes('lease acquired') ? a : b;
    const standby = active === a ? b : a;
    // The standby says what it is doing, once.
    await standby.waitFor(/lease held by another replica; standing by/);
    return { active, standby };
  }

  async function submitAll(queries: string[], deadlineMs: number, concurrency: number, onProgress?: (done: number) => Promise<void> | void): Promise<string[]> {
    const ids: string[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < queries.length) {
          const q = queries[next++];
          ids.push((await client.submit({ query: q, tenant_id: 'default', deadline_ms: deadlineMs })).correlation_id);
          await onProgress?.(ids.length);
        }
      }),
    );
    return ids;
  }

  async function terminal(ids: string[], timeoutMs = 30_000): Promise<WorkflowView[]> {
    return waitFor(
      async () => {
        const views = await Promise.all(ids.map((id) => client.workflow(id, 'default')));
        return views.every((v) => v && isTerminalStatus(v.status)) ? (views as WorkflowView[]) : undefined;
      },
      { timeoutMs, intervalMs: 200, what: `${ids.length} workflows terminal` },
    );
  }

  async function announcedOnce(id: string): Promise<void> {
    const envelopes = (await getJson(`${f.url}/v1/workflows/${id}/history`)).body.envelopes as Envelope[];
    expect(envelopes.filter((e) => e.message_type === 'status_update' && e.agent === 'hub')).toHaveLength(1);
  }

  it('hub killed and restarted mid-load - answers for every workflow and still times out the ones that come due', async () => {
    const h1 = startHub();
    await h1.waitFor(/hub ready/);
    let killed = false;
    const batch = Array.from({ length: 30 }, (_, i) => `what does the hub keep, question ${i}`);
    const first = await submitAll(batch, 15_000, 5, async (done) => {
      if (done >= 12 && !killed) {
        killed = true;
        await h1.stop('SIGKILL');
      }
    });
    expect(killed).toBe(true);
    // While no hub runs, a second batch that cannot finish before its deadline (no responder).
    await stopApp(f, 'responder');
    const due = await submitAll(Array.from({ length: 10 }, (_, i) => `due question ${i}`), 1500, 5);
    await new Promise((r) => setTimeout(r, 2000));
    f.chorus.components.push(await startResponder(f.chorus.bus, f.config, f.log));

    const h2 = startHub();
    await h2.waitFor(/hub ready/);
    const views = await terminal([...first, ...due]);
    const status = new Map(views.map((v) => [v.correlation_id, v.status]));
    for (const id of first) expect(status.get(id)).toBe('completed');
    for (const id of due) expect(status.get(id)).toBe('timed_out');
    for (const id of [...first.slice(0, 5), ...due.slice(0, 5)]) await announcedOnce(id);
  });

  it('hub down past the deadlines - a workflow that failed, was cancelled or was answered in time (junk stored on its response subject after the answer) ends failed, cancelled or completed, not timed out', async () => {
    const h1 = startHub();
    await h1.waitFor(/hub ready/);
    await stopApp(f, 'responder');
    await stopApp(f, 'planner');
    // Recorded by the hub (so it keeps their deadlines), then the hub goes: one will fail (a
    // profile this deployment does not have, once a planner runs), one is cancelled while it
    // waits, one just waits past its deadline.
    const failing = await client.submit({ query: 'what does the hub keep', tenant_id: 'default', deadline_ms: 6000, profiles: ['nosuch'] });
    const cancelled = await client.submit({ query: 'what does the hub keep', tenant_id: 'default', deadline_ms: 6000 });
    const due = await client.submit({ query: 'what does the hub keep', tenant_id: 'default', deadline_ms: 6000 });
    const answered = await client.submit({ query: 'what does the hub keep', tenant_id: 'default', deadline_ms: 6000 });
    const ids = [failing, cancelled, due, answered].map((s) => s.correlation_id);
    await waitFor(async () => ((await Promise.all(ids.map((id) => client.workflow(id, 'default')))).every((v) => v !== null) ? true : undefined), { what: 'the hub to record them' });
    await h1.stop('SIGKILL');
    f.chorus.components.push(await startPlanner(f.chorus.bus, f.config, f.log));
    await client.cancel(cancelled, 'no longer needed');
    // Answered in time, then junk stored on its response subject after the answer (dead-lettered once a hub reads it).
    const response = answerOf(answered, 'what does the hub keep', 'its ledger');
    await f.chorus.bus.publish(response);
    await f.chorus.bus.js.publish(`chorus.wf.default.response.${answered.correlation_id}`, 'junk after the answer');
    // Past the deadlines (6 s from the submits), so the new hub finds them all due.
    const latest = Math.max(...[failing, cancelled, due, answered].map((s) => Date.parse(s.deadline)));
    await new Promise((r) => setTimeout(r, Math.max(0, latest - Date.now()) + 500));

    // Sweeping at once, before its consumer has caught up with what was stored while it was down.
    const h2 = startHub({ CHORUS_HUB_SWEEP_MS: '10', CHORUS_WATCH_GRACE_MS: '1000' });
    await h2.waitFor(/hub ready/);
    const views = await terminal(ids);
    expect(views.map((v) => v.status)).toEqual(['failed', 'cancelled', 'timed_out', 'completed']);
    expect(views[0].errors[0].error_type).toBe('UNKNOWN_PROFILE');
    // Each ended when it did, not when the hub came back.
    expect(Date.parse(views[1].finished_at!)).toBeLessThan(Date.parse(views[1].deadline));
    // Nothing the failed workflow's agents stored came late. (The cancelled one's planner and
    // search, started after the cancel, did not know of it: no hub had announced it.)
    expect(views[0].late_envelopes).toBe(0);
  });

  it('a hub that takes over past the duplicate window does not announce again the ends the hub before it announced and did not save (also when the publisher\'s clock is ahead)', async () => {
    // A duplicate window of 1 s (each hub sets the stream's), so the takeover comes after it.
    const env = { CHORUS_DUPLICATE_WINDOW_MS: '1000' };
    const h1 = startHub(env);
    await h1.waitFor(/hub ready/);
    await stopApp(f, 'responder');
    const answered = await client.submit({ query: 'what does a takeover announce', tenant_id: 'default', deadline_ms: 20_000 });
    const due = await client.submit({ query: 'what does a takeover announce', tenant_id: 'default', deadline_ms: 2000 });
    const ids = [answered.correlation_id, due.correlation_id];
    await waitFor(async () => ((await Promise.all(ids.map((id) => client.workflow(id, 'default')))).every((v) => v?.status === 'running') ? true : undefined), { what: 'both running' });
    await h1.stop('SIGKILL');
    // What a hub that lost its lease before saving leaves behind: the answer and its announcement,
    // and the announcement of the other's timeout, stored; its ledger still says running.
    // Its responder's clock is a minute ahead: by its own timestamp the answer would look fresh to the new hub (inside the window).
    const response = { ...answerOf(answered, 'what does a takeover announce', 'once'), timestamp: new Date(Date.now() + 60_000).toISOString() };
    await f.chorus.bus.publish(response);
    const end = (status: 'completed' | 'timed_out', previous: Envelope) =>
      deriveEnvelope(previous, { messageType: 'status_update', agent: 'hub', payload: { workflow_status: status, previous_status: 'running', step: null, reason: 'before the takeover' }, nextSteps: [] });
    await f.chorus.bus.publish(end('completed', response), { part: 'completed' });
    await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(due.deadline) - Date.now()) + 100));
    const dueQuery = (await readWorkflowHistory(f.chorus.bus, due.correlation_id, { tenantId: 'default', types: ['query'] }))[0].envelope as Envelope;
    await f.chorus.bus.publish(end('timed_out', dueQuery), { part: 'timed_out' });
    await new Promise((r) => setTimeout(r, 1500));

    const h2 = startHub(env);
    await h2.waitFor(/hub ready/);
    const views = await terminal(ids);
    expect(views.map((v) => v.status)).toEqual(['completed', 'timed_out']);
    // Each end announced once, the first time, though the stream no longer dropped a repeat.
    for (const id of ids) await announcedOnce(id);
    await h2.waitFor(/already announced/);
  });

  it('a reused correlation id: what the stream holds of the earlier workflow under the same keys does not stand for the new one\'s announcements', async () => {
    const env = { CHORUS_DUPLICATE_WINDOW_MS: '1000' };
    const hub = startHub(env);
    await hub.waitFor(/hub ready/);
    await stopApp(f, 'responder');
    const id = `reused-${Date.now()}`;
    // The earlier workflow's end, stored under the key the new one's will have, past the window.
    const earlier = createEnvelope({ messageType: 'status_update', correlationId: id, tenantId: 'default', agent: 'hub', deadline: new Date(Date.now() + 1000), payload: { workflow_status: 'timed_out', previous_status: 'running', step: null, reason: 'the earlier workflow' } });
    await f.chorus.bus.publish(earlier, { part: 'timed_out' });
    await new Promise((r) => setTimeout(r, 1500));
    const query = createEnvelope({ messageType: 'query', correlationId: id, tenantId: 'default', agent: 'test-client', deadline: new Date(Date.now() + 1500), payload: { query: 'what does a reused id announce', top_k: 3, require_all: false } });
    const stored = await f.chorus.bus.publish(query);
    const [view] = await terminal([id]);
    expect(view.status).toBe('timed_out');
    const ends = (await readWorkflowHistory(f.chorus.bus, id, { tenantId: 'default', types: ['status_update'] })).filter((e) => (e.envelope as Envelope).agent === 'hub');
    // The new workflow's own timeout is announced, after its query.
    expect(ends.filter((e) => e.seq > stored.seq).map((e) => (e.envelope as { payload: { workflow_status: string } }).payload.workflow_status)).toEqual(['timed_out']);
  });

  it('an active hub that stalls past its lease writes nothing when it resumes: the standby that took over applies and lists every workflow', async () => {
    const { active: stalled, standby } = await startTwoHubs();

    // A steady load (about 40 workflows a second) through the stall and after it: the stalled hub
    // still holds pulled envelopes when it resumes, and pulls more before it learns it lost the lease.
    const stall = (async () => {
      await new Promise((r) => setTimeout(r, 1000));
      stalled.child.kill('SIGSTOP');
      // Resumed as the standby takes over: the two race, the stalled one with its backlog.
      await standby.waitFor(/lease acquired/);
      stalled.child.kill('SIGCONT');
    })();
    const ids = await submitAll(Array.from({ length: 200 }, (_, i) => `how is a stalled hub fenced ${i}`), 20_000, 4, () => new Promise((r) => setTimeout(r, 100)));
    await stall;
    const views = await terminal(ids, 45_000);
    expect(views.filter((v) => v.status !== 'completed').map((v) => `${v.correlation_id} ${v.status}: ${v.errors.map((e) => e.error_message).join('; ')}`)).toEqual([]);
    await stalled.waitFor(/lease lost/);
    // The envelopes it handed over are in one line per batch ('lease ran out while applying'), not one warning each.
    expect(stalled.output().split('\n').filter((l) => l.includes('will retry') && l.includes('HUB_NOT_ACTIVE'))).toEqual([]);

    // The list (the active hub's index) holds every workflow, as the ledger has it.
    const listed = new Map<string, string>();
    let cursor: string | null = null;
    do {
      const page: { body: { workflows: Array<{ correlation_id: string; status: string }>; next_cursor: string | null; complete: boolean } } = await getJson(`${f.url}/v1/workflows?limit=500${cursor ? `&cursor=${cursor}` : ''}`);
      for (const w of page.body.workflows) listed.set(w.correlation_id, w.status);
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(ids.filter((id) => listed.get(id) !== 'completed').map((id) => ({ id, listed: listed.get(id) ?? 'missing' }))).toEqual([]);
    for (const id of ids.slice(10, 30)) await announcedOnce(id);
  });

  it('GET /v1/agents - a hub replica that answers while none is active is degraded, with the reason; up once one takes the lease', async () => {
    // Another contender holds the hub's lease and does nothing: the replica started below stands by.
    const holder = await LeaderLease.open(f.chorus.bus, { bucket: 'chorus_leases', name: 'hub', ttlMs: 1000 }, createRootLogger({ name: 'test', level: 'silent' }));
    await holder.start(async () => undefined, async () => undefined);
    type HubEntry = { instances: number; health: string; warnings: string[] };
    const hubEntry = async (): Promise<HubEntry> => (await getJson(`${f.url}/v1/agents`)).body.agents.find((a: { name: string }) => a.name === 'hub');
    const hub = startHub();
    try {
      expect(holder.isLeader).toBe(true);
      await hub.waitFor(/lease held by another replica; standing by/);
      const standingBy = await waitFor(async () => {
        const e = await hubEntry();
        return e.instances === 1 ? e : undefined;
      });
      expect(standingBy).toEqual(expect.objectContaining({ health: 'degraded', warnings: [expect.stringMatching(/^no hub replica is active \(none holds the lease\)/)] }));
    } finally {
      await holder.stop(async () => undefined);
    }
    await hub.waitFor(/lease acquired/);
    const active = await waitFor(async () => {
      const e = await hubEntry();
      return e.health !== 'degraded' ? e : undefined;
    });
    expect(active).toEqual(expect.objectContaining({ instances: 1, health: 'up', warnings: [] }));
  });

  it('two hub replicas under load - exact counts, also when the active one is killed', async () => {
    const { active, standby } = await startTwoHubs();
    expect(standby.output()).not.toMatch(/lease acquired/);

    let killed = false;
    const ids = await submitAll(Array.from({ length: 200 }, (_, i) => `how are workflows counted ${i}`), 20_000, 20, async (done) => {
      if (done >= 100 && !killed) {
        killed = true;
        await active.stop('SIGKILL');
      }
    });
    await standby.waitFor(/lease acquired/);
    const views = await terminal(ids, 45_000);
    expect(views.filter((v) => v.status !== 'completed').map((v) => ({ status: v.status, steps: v.steps.map((s) => `${s.message_type}:${s.attempt}`), errors: v.errors, deadline: v.deadline, started: v.started_at, finished: v.finished_at }))).toEqual([]);
    const odd = views.filter((v) => v.steps.length !== 5 || v.duplicates_dropped !== 0).map((v) => ({ id: v.correlation_id, steps: v.steps.map((s) => `${s.message_type}:${s.attempt}`), dups: v.duplicates_dropped, late: v.late_envelopes }));
    expect(odd).toEqual([]);
    const stats = await waitFor(async () => {
      const s = (await getJson(`${f.url}/v1/stats`)).body;
      return s.totals?.completed === 200 ? s : undefined;
    });
    expect(stats.totals).toEqual(
      expect.objectContaining({ created: 200, completed: 200, failed: 0, timed_out: 0, cancelled: 0, active: 0, duplicates_dropped: 0, late_envelopes: 0 }),
    );
  });
});
