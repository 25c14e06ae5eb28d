import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Role, TaskState } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { Bus } from '@chorus/bus';
import { busOptionsFor } from '@chorus/config';
import { HubSubjects } from '@chorus/envelope';
import { startHub } from '../apps/hub/src';
import { postJson, startChorusFixture, stopApp, type ChorusFixture } from './chorus.fixture';
import { openApiChecker } from './openapi.check';
import { readSse } from './sse';

/**
 * The watchers of a workflow (SSE, A2A, `chorus watch`) when the hub stops answering for good: each
 * stops waiting CHORUS_WATCH_GRACE_MS after the workflow's deadline and says why, instead of waiting
 * for ever. Deadlines leave a few seconds between the moment the test stops the hub and the one a
 * running hub would have ended the workflow (timed out), so a slow machine does not race them.
 */
describe('watchers when the hub is gone', () => {
  let f: ChorusFixture;
  let child: ChildProcess | undefined;
  const GRACE_MS = 400;
  const DEADLINE_MS = 4000;

  // A fresh Chorus for each test, since each stops its hub.
  beforeEach(async () => {
    f = await startChorusFixture({ CHORUS_WATCH_GRACE_MS: String(GRACE_MS), CHORUS_DEFAULT_DEADLINE_MS: String(DEADLINE_MS) });
    // Without a responder the workflow stays running until its deadline, which only the hub enforces.
    await stopApp(f, 'responder');
  });
  afterEach(async () => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    child = undefined;
    await f?.stop();
  });

  it('SSE - a stream whose hub stops before the workflow ends closes with one `unconfirmed` event, no `terminal`', async () => {
    const before = Date.now();
    const submitted = await postJson(`${f.url}/v1/queries`, { query: 'what does the hub record', deadline_ms: DEADLINE_MS });
    expect(submitted.status).toBe(202);
    const id = submitted.body.correlation_id as string;
    let opened!: () => void;
    const streamOpen = new Promise<void>((resolve) => (opened = resolve));
    const reading = readSse(`${f.url}/v1/workflows/${id}/events`, {}, 20_000, () => opened());
    // The first event means the stream has the hub's view of the workflow; a stream that fails to open settles `reading` instead.
    await Promise.race([streamOpen, reading]);
    await stopApp(f, 'hub');

    const { status, events } = await reading;
    expect(status).toBe(200);
    expect(events.filter((e) => e.event === 'terminal')).toEqual([]);
    expect(events.filter((e) => e.event === 'unconfirmed')).toHaveLength(1);
    const last = events[events.length - 1];
    expect(last.event).toBe('unconfirmed');
    expect(last.data).toEqual({
      correlation_id: id,
      deadline: expect.any(String),
      status_url: `/v1/workflows/${id}`,
      reason: expect.stringMatching(/hub has not confirmed how workflow .* ended 400 ms after its deadline/),
    });
    // The workflow's own deadline, which it waited out, and the grace, before giving up.
    expect(Math.abs(Date.parse(last.data.deadline) - (before + DEADLINE_MS))).toBeLessThan(2000);
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(last.data.deadline) + GRACE_MS);
    // An EventSource is asked not to reconnect at once (it would replay every step to hear the same).
    expect(last.retry).toBe(30_000);
  });

  it('A2A - a streamed task whose hub stops is left working, with the reason, after the grace; tasks/get shows the outcome once a hub records it', async () => {
    const client = await new ClientFactory().createFromUrl(f.url);
    const t0 = Date.now();
    const stream = client.sendMessageStream({
      message: { messageId: randomUUID(), role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value: 'how are duplicates dropped' } }] },
    } as never);
    const events: any[] = [];
    for await (const event of stream as AsyncIterable<any>) {
      events.push(event);
      if (events.length === 1) await stopApp(f, 'hub');
    }
    expect(Date.now() - t0).toBeGreaterThanOrEqual(DEADLINE_MS + GRACE_MS);
    // Each streamed event is { payload: { $case: 'task' | 'statusUpdate' | ..., value } }.
    const statuses = events.map((e) => e.payload?.value?.status).filter(Boolean);
    const states = statuses.map((s) => s.state);
    expect(states).not.toContain(TaskState.TASK_STATE_COMPLETED);
    expect(states).not.toContain(TaskState.TASK_STATE_FAILED);
    const last = statuses[statuses.length - 1];
    expect(last.state).toBe(TaskState.TASK_STATE_WORKING);
    const text = (last.message?.parts ?? []).map((p: any) => p.content?.value ?? '').join('');
    expect(text).toMatch(/hub has not confirmed how workflow .* ended/);

    // A hub comes back, finds the workflow past its deadline and ends it; the task follows the ledger.
    const taskId = events[0].payload.value.id as string;
    // On a connection of its own: a second hub in this process must not share the first one's metrics.
    const bus = await Bus.connect(busOptionsFor(f.config, 'hub'), f.log);
    const hub = await startHub(bus, f.config, f.log);
    f.chorus.components.push({ name: 'hub', close: async () => (await hub.close(), await bus.close()) });
    let task: any;
    for (let i = 0; i < 100; i++) {
      task = await client.getTask({ id: taskId } as never);
      if (task.status.state !== TaskState.TASK_STATE_WORKING) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(task.status.state).toBe(TaskState.TASK_STATE_FAILED);
    expect(task.contextId).toBe(events[0].payload.value.contextId);
    const ending = (task.status.message?.parts ?? []).map((p: any) => p.content?.value ?? '').join('');
    expect(ending).toMatch(/deadline|timed out/i);
  });

  it('a hub down before the request - ?wait=true answers 504 with the accepted workflow\'s id; A2A SendMessage returns the task working, with the reason', async () => {
    await stopApp(f, 'hub');
    // A hub that hangs rather than one that is gone: requests to it get no answer, not "no responders".
    const hung = f.chorus.bus.nc.subscribe(HubSubjects.Workflow);
    const asked = Date.now();
    const waited = await postJson(`${f.url}/v1/queries?wait=true`, { query: 'what does the hub record', deadline_ms: 1000 });
    hung.unsubscribe();
    // The deadline, the grace (CHORUS_TERMINAL_GRACE_MS), and a second for a last read of where it
    // stands (it waited a whole request timeout, 5 s, more than the documented wait).
    expect(Date.now() - asked).toBeLessThan(1000 + f.config.workflow.terminalGraceMs + 1000 + 800);
    expect({ status: waited.status, id: typeof waited.body.correlation_id, url: waited.body.status_url, message: waited.body.message }).toEqual({
      status: 504,
      id: 'string',
      url: `/v1/workflows/${waited.body.correlation_id}`,
      message: expect.stringMatching(/accepted, but the hub has not confirmed how it ended/),
    });
    expect(waited.headers.get('location')).toBe(`/v1/workflows/${waited.body.correlation_id}`);
    expect((await openApiChecker(f.url))('/v1/queries', 'post', waited)).toBeNull();
    // The query is in the stream: a hub that comes back will find it.
    const stored = await f.chorus.bus.jsm.streams.getMessage(f.config.bus.workflowStream, { last_by_subj: `chorus.wf.default.query.${waited.body.correlation_id}` });
    expect(stored).not.toBeNull();

    const client = await new ClientFactory().createFromUrl(f.url);
    const sent: any = await client.sendMessage({
      message: { messageId: randomUUID(), role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value: 'how are duplicates dropped' } }] },
    } as never);
    const task = sent.payload?.value ?? sent;
    expect(task.status.state).toBe(TaskState.TASK_STATE_WORKING);
    const text = (task.status.message?.parts ?? []).map((p: any) => p.content?.value ?? '').join('');
    expect(text).toMatch(/hub has not confirmed how workflow .* ended/);
  });

  it('GET /v1/agents with the hub stopped - the agents are listed, and the missing step statistics are said to be unavailable, not an empty window', async () => {
    const before = (await (await fetch(`${f.url}/v1/agents`)).json()) as { window_error: string | null; window_ms: number | null };
    expect(before).toMatchObject({ window_error: null, window_ms: expect.any(Number) });
    await stopApp(f, 'hub');
    const r = await fetch(`${f.url}/v1/agents`);
    const body = (await r.json()) as { agents: Array<{ name: string; health: string; window: unknown }>; window_error: string | null; window_ms: number | null };
    expect(r.status).toBe(200);
    expect(body.window_error).toMatch(/^step statistics unavailable: they could not be read from the hub \(/);
    expect(body.window_ms).toBeNull();
    expect(body.agents.find((a) => a.name === 'intent')).toMatchObject({ health: 'up', window: null });
    expect(body.agents.find((a) => a.name === 'hub')).toMatchObject({ health: 'down' });
  });

  it('chorus watch - a watch whose hub stops before the workflow ends exits 3 (unreachable) with the reason on stderr, after the grace', async () => {
    const submitted = await postJson(`${f.url}/v1/queries`, { query: 'what does the hub record', deadline_ms: DEADLINE_MS });
    const id = submitted.body.correlation_id as string;
    const bin = join(__dirname, '..', 'bin', 'chorus.js');
    child = spawn(process.execPath, [bin, 'watch', id, '--nats', f.nats.url], {
      env: { ...process.env, NATS_URL: '', CHORUS_WATCH_GRACE_MS: String(GRACE_MS) },
    });
    let stdout = '';
    let stderr = '';
    let hubStopped: Promise<void> | undefined;
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      // The first step line means the CLI has the workflow and is watching it.
      hubStopped ??= stopApp(f, 'hub');
    });
    const code = await new Promise<number | null>((resolve) => child!.on('exit', resolve));
    await hubStopped;
    expect(stdout).toMatch(/query/);
    expect(stderr).toMatch(/^chorus: the hub has not confirmed how workflow .* ended 400 ms after its deadline/);
    expect(code).toBe(3);
  });
});

describe('metrics and readiness when NATS is gone', () => {
  let f: ChorusFixture;

  beforeAll(async () => {
    f = await startChorusFixture({}, { own: true });
  });
  afterAll(async () => {
    await f?.stop();
  });

  it('GET /metrics and /ready while NATS is down - metrics still answer (the process metrics, the hub totals at their last values, a collect failure counted); /ready is 503 at once, a submission (REST or A2A) within a second', async () => {
    expect((await postJson(`${f.url}/v1/queries?wait=true`, { query: 'what does the hub keep' })).body.status).toBe('completed');
    const before = await (await fetch(`${f.url}/metrics`)).text();
    const completed = /^chorus_workflows\{status="completed",app="chorus"\} (\d+)$/m;
    expect(before).toMatch(completed);
    await f.nats.server!.stop('SIGKILL');
    await new Promise((r) => setTimeout(r, 1100)); // past the one read of the totals a scrape shares

    const scrape = async () => {
      const started = Date.now();
      const res = await fetch(`${f.url}/metrics`);
      const text = await res.text();
      expect({ status: res.status, fast: Date.now() - started < 4000 }).toEqual({ status: 200, fast: true });
      return text;
    };
    // A failed read shows in the scrape it failed in (it showed in the next one only).
    const text = await scrape();
    expect(text).toMatch(/^process_cpu_user_seconds_total/m);
    expect(text.match(completed)?.[1]).toBe(before.match(completed)?.[1]);
    expect(text).toMatch(/^chorus_metrics_collect_failures_total\{metric="chorus_workflows",app="chorus"\} [1-9]/m);
    expect(text).toMatch(/^chorus_hub_ledger_writes_total\{app="chorus"\} [1-9]/m);

    // A readiness probe is answered at once, not after a request's timeout.
    const started = Date.now();
    const ready = await fetch(`${f.url}/ready`);
    expect({ status: ready.status, body: await ready.json(), fast: Date.now() - started < 1000 }).toEqual({
      status: 503,
      body: expect.objectContaining({ nats: 'disconnected, reconnecting' }),
      fast: true,
    });
    // So are the routes that need the bus, after a second's wait for a reconnect, and /a2a.
    const submitted = Date.now();
    const refused = await postJson(`${f.url}/v1/queries`, { query: 'anyone there' });
    expect({ status: refused.status, message: refused.body.message, fast: Date.now() - submitted < 2500 }).toEqual({
      status: 503,
      message: expect.stringMatching(/NATS disconnected, reconnecting/),
      fast: true,
    });
    expect((await openApiChecker(f.url))('/v1/queries', 'post', refused)).toBeNull();
    const sent = Date.now();
    const message = { kind: 'message', messageId: 'm-down', role: 'user', parts: [{ kind: 'text', text: 'anyone there' }] };
    const rpc = await postJson(`${f.url}/a2a`, { jsonrpc: '2.0', id: 7, method: 'message/send', params: { message } });
    expect({ status: rpc.status, id: rpc.body.id, code: rpc.body.error?.code, message: rpc.body.error?.message, fast: Date.now() - sent < 2500 }).toEqual({
      status: 503,
      id: 7,
      code: -32603,
      message: expect.stringMatching(/NATS disconnected, reconnecting/),
      fast: true,
    });
  });
});
