import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Role, TaskState } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, type Client } from '@a2a-js/sdk/client';
import { createEnvelope } from '@chorus/envelope';
import { waitFor } from '@chorus/testing';
import { startPlanner } from '../apps/planner/src';
import { startProfiles } from '../apps/profile/src';
import { startChorus } from '../apps/chorus/src/chorus';
import { getJson, postJson, startChorusFixture, stopApp, type ChorusFixture } from './chorus.fixture';

const message = (text: string) => ({
  messageId: randomUUID(),
  role: Role.ROLE_USER,
  parts: [{ content: { $case: 'text' as const, value: text } }],
}) as never;

const textOf = (parts: Array<{ content?: { $case: string; value?: unknown } }> = []) =>
  parts.map((p) => (p.content?.$case === 'text' ? String(p.content.value) : '')).join('');

/** The official @a2a-js/sdk client against Chorus's A2A surface. */
describe('A2A', () => {
  let f: ChorusFixture;
  let client: Client;
  let clientOptions: ClientFactoryOptions;
  const KEY = 'a2a-test-key-0123456789';

  beforeAll(async () => {
    f = await startChorusFixture({ CHORUS_API_KEYS: `${KEY}:acme`, CHORUS_RETRY_BASE_MS: '100', CHORUS_RETRY_MAX_MS: '300', CHORUS_MAX_DELIVER: '20' });
    clientOptions = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      clientConfig: {
        interceptors: [
          {
            async before(args: { options: { serviceParameters: Record<string, string> } }) {
              args.options.serviceParameters.Authorization = `Bearer ${KEY}`;
            },
            async after() {},
          },
        ],
      },
    } as never);
    client = await new ClientFactory(clientOptions).createFromUrl(f.url);
  });
  afterAll(async () => {
    await f?.stop();
  });

  it('A2A - the agent card is built from the running agents and profiles', async () => {
    const card = await (await fetch(`${f.url}/.well-known/agent-card.json`, { headers: { 'A2A-Version': '1.0' } })).json() as any;
    expect(card.name).toBe('Chorus');
    expect(card.capabilities.streaming).toBe(true);
    expect(card.supportedInterfaces[0]).toEqual(expect.objectContaining({ url: `${f.url}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }));
    expect(card.skills[0].tags).toEqual(expect.arrayContaining(['bm25', 'trigram']));
    expect(card.description).toMatch(/intent → planner → search → responder/);
    // The fixture's profiles search Chorus's own docs, which the examples ask about.
    expect(card.skills[0].examples).toEqual(expect.arrayContaining(['how does chorus drop duplicates']));
    // The API key scheme in the 1.0 JSON form a client parses (it was the SDK's in-memory form, `{"scheme": {"$case": …}}`),
    // and in the 0.3 form.
    expect(card.securitySchemes).toEqual({ bearer: { httpAuthSecurityScheme: expect.objectContaining({ scheme: 'bearer' }) } });
    expect(JSON.stringify(card)).not.toContain('$case');
    const legacy = await (await fetch(`${f.url}/.well-known/agent-card.json`)).json() as any;
    expect(legacy.securitySchemes).toEqual({ bearer: expect.objectContaining({ type: 'http', scheme: 'bearer' }) });
  });

  it('A2A - the agent card gives no examples about Chorus when the profiles search another corpus (CHORUS_CORPUS)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'chorus-a2a-card-'));
    let other: ChorusFixture | undefined;
    try {
      writeFileSync(join(dir, 'corpus.jsonl'), `${JSON.stringify({ id: 'cats', title: 'Cats', text: 'Cats purr and dogs bark.' })}\n`);
      other = await startChorusFixture({ CHORUS_CORPUS: join(dir, 'corpus.jsonl') }, {}, ['ingress', 'profiles']);
      const card = await (await fetch(`${other.url}/.well-known/agent-card.json`, { headers: { 'A2A-Version': '1.0' } })).json() as any;
      expect(card.skills[0].tags).toEqual(expect.arrayContaining(['bm25']));
      expect(card.skills[0].examples ?? []).toEqual([]);
    } finally {
      await other?.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('A2A - message/send returns a completed task whose id is the workflow, with the answer and the results', async () => {
    const task = (await client.sendMessage({ message: message('how does chorus drop duplicates') } as never)) as any;
    expect('messageId' in task).toBe(false);
    expect(task.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const answer = task.artifacts.find((a: { artifactId: string }) => a.artifactId === 'answer');
    expect(textOf(answer.parts).length).toBeGreaterThan(10);
    const results = task.artifacts.find((a: { artifactId: string }) => a.artifactId === 'results');
    expect(results.parts[0].content.value.results.length).toBeGreaterThan(0);
    const workflow = await (await fetch(`${f.url}/v1/workflows/${task.id}`, { headers: { authorization: `Bearer ${KEY}` } })).json() as any;
    expect(workflow.status).toBe('completed');
    expect(workflow.tenant_id).toBe('acme');
  });

  it('A2A - message/stream: the task, working updates per step, the artifacts, then exactly one terminal update', async () => {
    const events: Array<{ $case: string; value: any }> = [];
    for await (const event of client.sendMessageStream({ message: message('what does the correlation hub keep') } as never)) {
      events.push((event as any).payload);
    }
    expect(events[0].$case).toBe('task');
    const updates = events.filter((e) => e.$case === 'statusUpdate').map((e) => e.value.status.state);
    const terminal = updates.filter((s) => [TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_CANCELED].includes(s));
    expect(terminal).toEqual([TaskState.TASK_STATE_COMPLETED]);
    expect(updates[updates.length - 1]).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(updates.filter((s) => s === TaskState.TASK_STATE_WORKING).length).toBeGreaterThanOrEqual(4);
    expect(events.filter((e) => e.$case === 'artifactUpdate').map((e) => e.value.artifact.artifactId)).toEqual(['answer', 'results']);
    const workingTexts = events.filter((e) => e.$case === 'statusUpdate' && e.value.status.message).map((e) => textOf(e.value.status.message.parts));
    expect(workingTexts).toEqual(expect.arrayContaining(['intent: classification result', 'responder: response']));
  });

  it('A2A - tasks/get answers from the workflow; another tenant gets task-not-found', async () => {
    const sent = (await client.sendMessage({ message: message('what is a tenant') } as never)) as any;
    const got = (await client.getTask({ id: sent.id } as never)) as any;
    expect(got.id).toBe(sent.id);
    expect(got.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(got.artifacts.length).toBe(2);
    await expect(client.getTask({ id: 'no-such-task' } as never)).rejects.toMatchObject({ name: 'TaskNotFoundError' });
  });

  it('A2A - a task read through another ingress (no snapshot of it: another replica, or after a restart) keeps its contextId', async () => {
    const sent = (await client.sendMessage({ message: message('what is a context') } as never)) as any;
    expect(sent.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const other = await startChorus(f.config, f.log, { exitOnSignal: false, apps: ['ingress'] });
    try {
      const otherClient = await new ClientFactory(clientOptions).createFromUrl(other.url!);
      const got = (await otherClient.getTask({ id: sent.id } as never)) as any;
      expect({ id: got.id, contextId: got.contextId, state: got.status.state }).toEqual({ id: sent.id, contextId: sent.contextId, state: TaskState.TASK_STATE_COMPLETED });
      expect(got.contextId).not.toBe(sent.id);
    } finally {
      await other.shutdown('test done');
    }
  });

  it('A2A - tasks/cancel cancels the workflow; the stream ends canceled, exactly once', async () => {
    await stopApp(f, 'profiles'); // the search step now waits and retries: the task stays working
    const events: Array<{ $case: string; value: any }> = [];
    let cancelled: Promise<unknown> | undefined;
    for await (const event of client.sendMessageStream({ message: message('this one will be cancelled') } as never)) {
      const payload = (event as any).payload;
      events.push(payload);
      if (!cancelled && payload.$case === 'statusUpdate' && payload.value.status.state === TaskState.TASK_STATE_WORKING) {
        cancelled = client.cancelTask({ id: payload.value.taskId } as never);
      }
    }
    const result = (await cancelled) as any;
    expect(result.status.state).toBe(TaskState.TASK_STATE_CANCELED);
    const terminal = events.filter((e) => e.$case === 'statusUpdate').map((e) => e.value.status.state).filter((s) => s !== TaskState.TASK_STATE_WORKING);
    expect(terminal).toEqual([TaskState.TASK_STATE_CANCELED]);
    const workflow = await (await fetch(`${f.url}/v1/workflows/${result.id}`, { headers: { authorization: `Bearer ${KEY}` } })).json() as any;
    expect(workflow.status).toBe('cancelled');
    f.chorus.components.push(await startProfiles(f.chorus.bus, f.config, f.log));
  });

  it('A2A - a message naming a task still running is refused (UnsupportedOperation) under both protocol versions, and the task runs on untouched', async () => {
    await stopApp(f, 'planner'); // classified, then nothing: the task stays working
    const auth = { authorization: `Bearer ${KEY}` };
    const raw = async (version: string, method: string, params: unknown) =>
      (
        await fetch(`${f.url}/a2a`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...auth, 'A2A-Version': version },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
        })
      ).text();
    const followUps = (id: string) => [
      raw('0.3', 'message/send', { message: { kind: 'message', messageId: randomUUID(), role: 'user', taskId: id, parts: [{ kind: 'text', text: 'tell me about bm25 instead' }] } }),
      raw('1.0', 'SendMessage', { message: { messageId: randomUUID(), role: 'ROLE_USER', taskId: id, parts: [{ text: 'tell me about bm25 instead' }] } }),
      raw('1.0', 'SendStreamingMessage', { message: { messageId: randomUUID(), role: 'ROLE_USER', taskId: id, parts: [{ data: { x: 1 } }] } }),
    ];
    // A task running in this ingress (its stream open), and one submitted over REST.
    const states: number[] = [];
    let id: string | undefined;
    for await (const event of client.sendMessageStream({ message: message('what does a follow-up change'), configuration: { historyLength: 0 } } as never)) {
      const payload = (event as any).payload;
      if (payload.$case !== 'statusUpdate') continue;
      states.push(payload.value.status.state);
      if (id === undefined && payload.value.status.state === TaskState.TASK_STATE_WORKING) {
        id = payload.value.taskId as string;
        for (const text of await Promise.all(followUps(id))) expect(text).toMatch(new RegExp(`Task ${id} is still running its query`));
        expect(((await client.getTask({ id } as never)) as any).status.state).toBe(TaskState.TASK_STATE_WORKING);
        await client.cancelTask({ id } as never);
      }
    }
    // One terminal update, the cancel's: the follow-ups started nothing.
    expect(states.filter((s) => s !== TaskState.TASK_STATE_WORKING)).toEqual([TaskState.TASK_STATE_CANCELED]);
    const workflow = (await getJson(`${f.url}/v1/workflows/${id}`, auth)).body;
    expect({ query: workflow.query, duplicates: workflow.duplicates_dropped }).toEqual({ query: 'what does a follow-up change', duplicates: 0 });

    const rest = (await postJson(`${f.url}/v1/queries`, { query: 'what does a follow-up change over REST', deadline_ms: 30_000 }, auth)).body.correlation_id as string;
    await waitFor(async () => ((await getJson(`${f.url}/v1/workflows/${rest}`, auth)).body.status === 'running' ? true : undefined), { what: 'the REST workflow running' });
    const answers = await Promise.all(followUps(rest));
    for (const text of answers) expect(text).toMatch(new RegExp(`Task ${rest} is still running its query`));
    expect(answers[0]).toMatch(/"code":-32004/);
    await postJson(`${f.url}/v1/workflows/${rest}/cancel`, {}, auth);
    f.chorus.components.push(await startPlanner(f.chorus.bus, f.config, f.log));
  });

  it('A2A - resubscribers to a task running here that leave are let go at once, not held until the task ends; one that stays gets its end', async () => {
    await stopApp(f, 'planner'); // classified, then nothing: the task stays working
    // Listeners on the task's event bus (an EventTarget), counted as they are added and removed.
    const listening = new Map<EventTarget, number>();
    const { addEventListener: add, removeEventListener: remove } = EventTarget.prototype;
    const count = (target: EventTarget, type: string, by: number) => {
      if (type === 'event' && target.constructor.name === 'DefaultExecutionEventBus') listening.set(target, (listening.get(target) ?? 0) + by);
    };
    EventTarget.prototype.addEventListener = function (this: EventTarget, type: string, ...rest: any[]) {
      count(this, type, 1);
      return (add as any).call(this, type, ...rest);
    };
    EventTarget.prototype.removeEventListener = function (this: EventTarget, type: string, ...rest: any[]) {
      count(this, type, -1);
      return (remove as any).call(this, type, ...rest);
    };
    let mostAfterLeaving = 0;
    try {
      const auth = { authorization: `Bearer ${KEY}` };
      const resubscribe = (id: string, signal?: AbortSignal) =>
        fetch(`${f.url}/a2a`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...auth, 'A2A-Version': '1.0' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SubscribeToTask', params: { id } }),
          signal,
        });
      let id: string | undefined;
      let staying: Promise<string> | undefined;
      for await (const event of client.sendMessageStream({ message: message('who listens to a running task') } as never)) {
        const payload = (event as any).payload;
        if (id !== undefined || payload.$case !== 'statusUpdate' || payload.value.status.state !== TaskState.TASK_STATE_WORKING) continue;
        id = payload.value.taskId as string;
        // Fifteen come, read the task, and go, one after another (the event bus warns past ten listeners).
        for (let i = 0; i < 15; i++) {
          const leaving = new AbortController();
          const res = await resubscribe(id, leaving.signal);
          const first = await res.body!.getReader().read();
          expect(new TextDecoder().decode(first.value)).toContain('"task"');
          leaving.abort();
          await new Promise((r) => setTimeout(r, 20));
        }
        // Let go once each connection's close is seen (asynchronous): waited for, not assumed after 20 ms.
        const most = () => Math.max(...listening.values());
        await waitFor(async () => (most() <= 2 ? true : undefined), { timeoutMs: 5000, what: 'the leaving resubscribers let go' }).catch(() => undefined);
        mostAfterLeaving = most();
        staying = resubscribe(id).then((res) => res.text());
        await new Promise((r) => setTimeout(r, 200));
        await client.cancelTask({ id } as never);
      }
      expect(await staying).toMatch(/TASK_STATE_CANCELED/);
      // The execution's own listener and the first stream's, not one more per client that came and went.
      expect(mostAfterLeaving).toBeLessThanOrEqual(2);
    } finally {
      EventTarget.prototype.addEventListener = add;
      EventTarget.prototype.removeEventListener = remove;
      f.chorus.components.push(await startPlanner(f.chorus.bus, f.config, f.log));
    }
  });

  it('A2A - tasks/cancel of a task running elsewhere that completes meanwhile answers as the workflow ended: canceled only if it was cancelled', async () => {
    await stopApp(f, 'planner'); // classified, then nothing until the test answers it
    const auth = { authorization: `Bearer ${KEY}` };
    try {
      // The answer lands from 0 to 7 ms after the cancel request: some before the cancel, some after.
      for (let i = 0; i < 16; i++) {
        const id = (await postJson(`${f.url}/v1/queries`, { query: `what ends first ${i}`, deadline_ms: 30_000 }, auth)).body.correlation_id as string;
        await waitFor(async () => ((await getJson(`${f.url}/v1/workflows/${id}`, auth)).body.status === 'running' ? true : undefined), { what: 'the workflow running' });
        const response = createEnvelope({
          messageType: 'response',
          correlationId: id,
          tenantId: 'acme',
          agent: 'responder',
          deadline: new Date(Date.now() + 20_000),
          payload: { query: `what ends first ${i}`, answer: 'the answer', results: [], provenance: { sources: [], profiles_used: [], degraded: [], fusion: { k: 60, rank_window: 100 }, method: 'test' } },
        });
        // The answer and the cancel at once (the cancel from a request to this ingress, which does not run the task).
        const [, cancelled] = await Promise.all([
          new Promise((r) => setTimeout(r, i % 8)).then(() => f.chorus.bus.publish(response)),
          client.cancelTask({ id } as never).then(
            (task: any) => `canceled ${task.status.state}`,
            (e: Error) => `refused ${e.message}`,
          ),
        ]);
        const ended = await waitFor(async () => {
          const status = (await getJson(`${f.url}/v1/workflows/${id}`, auth)).body.status as string;
          return status === 'completed' || status === 'cancelled' ? status : undefined;
        });
        const got = ((await client.getTask({ id } as never)) as any).status.state;
        if (ended === 'cancelled') expect([cancelled, got]).toEqual([`canceled ${TaskState.TASK_STATE_CANCELED}`, TaskState.TASK_STATE_CANCELED]);
        else expect([cancelled.startsWith('refused'), got]).toEqual([true, TaskState.TASK_STATE_COMPLETED]);
      }
    } finally {
      f.chorus.components.push(await startPlanner(f.chorus.bus, f.config, f.log));
    }
  });

  it('A2A - a non-blocking send answers with the task, its history holding the user message', async () => {
    const sent = message('what is in a history');
    const task = (await client.sendMessage({ message: sent, configuration: { returnImmediately: true } } as never)) as any;
    expect([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING]).toContain(task.status.state);
    expect(task.history.map((m: any) => m.messageId)).toContain((sent as any).messageId);
  });

  it("A2A - a message's metadata may set the query's deadline_ms, top_k, profiles and require_all, checked as the REST body is", async () => {
    const auth = { authorization: `Bearer ${KEY}` };
    const send = async (version: string, metadata: object) => {
      const message10 = { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'how does chorus drop duplicates' }], metadata };
      const message03 = { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'how does chorus drop duplicates' }], metadata };
      const res = await fetch(`${f.url}/a2a`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth, 'A2A-Version': version },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: version === '1.0' ? 'SendMessage' : 'message/send', params: { message: version === '1.0' ? message10 : message03 } }),
      });
      return ((await res.json()) as any).result;
    };
    for (const version of ['1.0', '0.3']) {
      const before = Date.now();
      const answered = await send(version, { deadline_ms: 30_000, top_k: 2, profiles: ['bm25'], require_all: true, client_own_key: 'left alone' });
      const task = answered.task ?? answered;
      const workflow = (await getJson(`${f.url}/v1/workflows/${task.id}`, auth)).body;
      expect(workflow.status).toBe('completed');
      expect(workflow.result.results).toHaveLength(2);
      expect(workflow.result.provenance.profiles_used).toEqual(['bm25']);
      expect(Date.parse(workflow.deadline) - before).toBeGreaterThan(25_000);
      const refused = await send(version, { top_k: 0, deadline_ms: 10 ** 9, profiles: 'bm25' });
      const rejected = refused.task ?? refused;
      const reason = JSON.stringify(rejected.status);
      expect(reason).toMatch(/rejected|REJECTED/);
      for (const field of ['top_k', 'deadline_ms', 'profiles']) expect(reason).toContain(field);
    }
  });

  it('A2A - ListTasks filters by status and contextId and pages with nextPageToken', async () => {
    const auth = { authorization: `Bearer ${KEY}` };
    const context = `list-ctx-${randomUUID().slice(0, 8)}`;
    const ids: string[] = [];
    for (const text of ['what does the list show', 'what does the list page']) {
      const task = (await client.sendMessage({ message: { ...(message(text) as object), contextId: context } } as never)) as any;
      expect(task.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
      ids.push(task.id);
    }
    await stopApp(f, 'planner');
    const cancelled = (await postJson(`${f.url}/v1/queries`, { query: 'what does the list leave out', deadline_ms: 30_000 }, auth)).body.correlation_id as string;
    await postJson(`${f.url}/v1/workflows/${cancelled}/cancel`, {}, auth);
    f.chorus.components.push(await startPlanner(f.chorus.bus, f.config, f.log));
    await waitFor(async () => ((await getJson(`${f.url}/v1/workflows/${cancelled}`, auth)).body.status === 'cancelled' ? true : undefined), { what: 'the cancel recorded' });
    const list = async (params: object) => {
      const res = await fetch(`${f.url}/a2a`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth, 'A2A-Version': '1.0' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ListTasks', params }),
      });
      return (await res.json()) as any;
    };
    const byContext = (await list({ contextId: context })).result;
    expect(byContext.tasks.map((t: any) => t.id)).toEqual([...ids].reverse());
    const canceled = (await list({ status: 'TASK_STATE_CANCELED' })).result;
    expect(canceled.tasks.map((t: any) => t.id)).toContain(cancelled);
    expect(canceled.tasks.every((t: any) => t.status.state === 'TASK_STATE_CANCELED')).toBe(true);
    expect((await list({ status: 'TASK_STATE_REJECTED' })).result.tasks ?? []).toEqual([]);
    // One at a time, to the end: every task once, newest first, then no token.
    const paged: string[] = [];
    let token = '';
    do {
      const page = (await list({ contextId: context, pageSize: 1, ...(token ? { pageToken: token } : {}) })).result;
      paged.push(...(page.tasks ?? []).map((t: any) => t.id));
      token = page.nextPageToken ?? '';
    } while (token);
    expect(paged).toEqual([...ids].reverse());
    expect((await list({ pageToken: 'not-a-token' })).error.message).toMatch(/pageToken must be the nextPageToken/);
  });

  it('A2A - resubscribing to a running task this ingress did not start (a workflow submitted over REST) follows it to exactly one terminal update, under 1.0 and 0.3', async () => {
    await stopApp(f, 'profiles'); // the search step now waits and retries: the workflow stays running
    let restarted: Promise<void> | undefined;
    const restartProfiles = () => (restarted ??= startProfiles(f.chorus.bus, f.config, f.log).then((p) => void f.chorus.components.push(p)));
    try {
      const auth = { authorization: `Bearer ${KEY}` };
      const id = (await postJson(`${f.url}/v1/queries`, { query: 'how does the hub keep its ledger' }, auth)).body.correlation_id as string;
      await waitFor(async () => (await getJson(`${f.url}/v1/workflows/${id}`, auth)).status === 200, { what: 'the hub to record the workflow' });
      // 0.3: tasks/resubscribe is always answered with SSE; read until its first event, the rest later.
      const legacy = await fetch(`${f.url}/a2a`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/resubscribe', params: { id } }),
      });
      const reader = legacy.body!.getReader();
      const decoder = new TextDecoder();
      let legacyText = '';
      const readLegacy = async (untilFirstEvent: boolean) => {
        while (!untilFirstEvent || !legacyText.includes('\n\n')) {
          const { value, done } = await reader.read();
          if (done) return;
          legacyText += decoder.decode(value, { stream: true });
        }
      };
      await readLegacy(true);
      const events: Array<{ $case: string; value: any }> = [];
      for await (const event of client.resubscribeTask({ id } as never)) {
        events.push((event as any).payload);
        void restartProfiles(); // both streams are following the task now: let it finish
      }
      await readLegacy(false);

      expect({ kind: events[0]?.$case, id: events[0]?.value.id, state: events[0]?.value.status.state }).toEqual({ kind: 'task', id, state: TaskState.TASK_STATE_WORKING });
      const updates = events.filter((e) => e.$case === 'statusUpdate').map((e) => e.value.status.state);
      expect(updates.filter((s) => s !== TaskState.TASK_STATE_WORKING)).toEqual([TaskState.TASK_STATE_COMPLETED]);
      expect(events[events.length - 1]).toEqual({ $case: 'statusUpdate', value: expect.objectContaining({ taskId: id, status: expect.objectContaining({ state: TaskState.TASK_STATE_COMPLETED }) }) });
      expect(events.filter((e) => e.$case === 'artifactUpdate').map((e) => e.value.artifact.artifactId)).toEqual(['answer', 'results']);

      const results = legacyText.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice('data: '.length)).result);
      expect(results[0]).toMatchObject({ kind: 'task', id, status: { state: 'working' } });
      const legacyUpdates = results.filter((r) => r?.kind === 'status-update').map((r) => r.status.state);
      expect(legacyUpdates.filter((s) => s !== 'working')).toEqual(['completed']);
      expect(results[results.length - 1]).toMatchObject({ kind: 'status-update', taskId: id, status: { state: 'completed' } });
    } finally {
      await restartProfiles();
    }
  });

  it('A2A - a resubscription to a task this ingress did not start stops following it when its client leaves', async () => {
    // A Chorus of its own: no planner, so a workflow runs until its deadline; a nats-server whose
    // monitoring endpoint lists the subscriptions (the suite's server may be NATS_URL's or a container).
    const g = await startChorusFixture({}, { monitoring: true }, ['hub', 'ingress', 'intent']);
    try {
      const id = (await postJson(`${g.url}/v1/queries`, { query: 'how does the hub keep its ledger', deadline_ms: 60_000 })).body.correlation_id as string;
      await waitFor(async () => (await getJson(`${g.url}/v1/workflows/${id}`)).status === 200, { what: 'the hub to record the workflow' });
      // The server's subscriptions on the workflow's subjects: the follower's, while it follows.
      const following = async () => {
        const connz = (await (await fetch(`${g.nats.monitorUrl}/connz?subs=detail`)).json()) as { connections: Array<{ subscriptions_list_detail?: Array<{ subject: string }> }> };
        return connz.connections.flatMap((c) => c.subscriptions_list_detail ?? []).filter((d) => d.subject.endsWith(`.${id}`)).length;
      };
      expect(await following()).toBe(0);
      for (const [version, method] of [['1.0', 'SubscribeToTask'], ['0.3', 'tasks/resubscribe']]) {
        const leave = new AbortController();
        const res = await fetch(`${g.url}/a2a`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'A2A-Version': version },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { id } }),
          signal: leave.signal,
        });
        const first = await res.body!.getReader().read();
        expect(new TextDecoder().decode(first.value)).toContain(id);
        await waitFor(async () => (await following()) === 1, { what: `the ${method} stream to follow the workflow` });
        leave.abort();
        await waitFor(async () => (await following()) === 0, { what: `the ${method} stream to stop following once its client left`, timeoutMs: 5_000 });
      }
    } finally {
      await g.stop();
    }
  });

  it('A2A - a request without a key is refused', async () => {
    const res = await fetch(`${f.url}/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'x' } }),
    });
    expect(res.status).toBe(401);
    expect(((await res.json()) as any).error.message).toMatch(/API key/);
  });

  it('A2A - the 0.3 method names work too (message/send without a version header)', async () => {
    const res = await fetch(`${f.url}/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'message/send',
        params: { message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'what is a profile' }] } },
      }),
    });
    const body = (await res.json()) as any;
    expect(body.error).toBeUndefined();
    expect(body.result.kind).toBe('task');
    expect(body.result.status.state).toBe('completed');
  });
  it('A2A - a message with no text, or a query Chorus refuses, is a rejected task naming why, pointing at no workflow', async () => {
    const send = async (parts: unknown[]) => {
      const res = await fetch(`${f.url}/a2a`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: { message: { kind: 'message', messageId: randomUUID(), role: 'user', parts } } }),
      });
      return ((await res.json()) as any).result;
    };
    const noText = await send([{ kind: 'data', data: { query: 'in a data part' } }]);
    expect({ state: noText.status.state, why: noText.status.message?.parts?.[0]?.text, metadata: noText.metadata }).toEqual({
      state: 'rejected',
      why: 'the message has no text part to search for',
      metadata: undefined,
    });
    // A text part whose text is not a string is no text (it ran the query "5").
    const notAString = await send([{ kind: 'text', text: 5 }]);
    expect({ state: notAString.status.state, why: notAString.status.message?.parts?.[0]?.text }).toEqual({ state: 'rejected', why: 'the message has no text part to search for' });
    const tooLong = await send([{ kind: 'text', text: 'x'.repeat(5000) }]);
    expect({ state: tooLong.status.state, why: tooLong.status.message?.parts?.[0]?.text, metadata: tooLong.metadata }).toEqual({
      state: 'rejected',
      why: expect.stringMatching(/^invalid query: .*query/),
      metadata: undefined,
    });
  });

  const rpc = async (body: string, headers: Record<string, string> = {}) => {
    const res = await fetch(`${f.url}/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}`, 'A2A-Version': '1.0', ...headers },
      body,
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  it('A2A - a body over the JSON parser limit, or in a charset it cannot read, gets a JSON-RPC error, not the REST error shape', async () => {
    // Over CHORUS_HTTP_BODY_LIMIT (64 KiB), as on the REST API; under express's own default (100 KiB), which applied before.
    const big = await rpc(JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'GetTask', params: { id: 'x', pad: 'p'.repeat(70_000) } }));
    expect(big.body).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringMatching(/larger than 65536 bytes/) } });
    expect(big.body.statusCode).toBeUndefined();
    const unknown = await rpc(JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'GetTask', params: { id: 'x' } }), { 'content-type': 'application/json; charset=x-nonesuch' });
    expect(unknown.body).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32005, message: expect.stringMatching(/UTF-8/) } });
  });

  it('A2A - another HTTP method gets a 405 naming the one that works, in the endpoint error shape', async () => {
    const auth = { authorization: `Bearer ${KEY}` };
    const get = await fetch(`${f.url}/a2a`, { headers: auth });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    expect(await get.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringMatching(/takes POST/) } });
    const card = await fetch(`${f.url}/.well-known/agent-card.json`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(card.status).toBe(405);
    expect(card.headers.get('allow')).toBe('GET, HEAD');
    expect(await card.json()).toEqual({ statusCode: 405, error: 'Method Not Allowed', message: expect.stringMatching(/read with GET/) });
    // What works still does: the card by HEAD (GET above), OPTIONS as the routers answer it.
    expect((await fetch(`${f.url}/.well-known/agent-card.json`, { method: 'HEAD' })).status).toBe(200);
    const options = await fetch(`${f.url}/a2a`, { method: 'OPTIONS', headers: auth });
    expect(options.status).toBe(200);
    expect(options.headers.get('allow')).toMatch(/POST/);
  });

  it('A2A - an error answer carries its request id even when the id is 0 or an empty string', async () => {
    for (const id of [0, '']) {
      // The 0.3 streaming method's "task not found" is raised before the stream starts.
      const answer = await rpc(
        JSON.stringify({ jsonrpc: '2.0', id, method: 'message/stream', params: { message: { kind: 'message', messageId: randomUUID(), role: 'user', taskId: 'no-such-task', parts: [{ kind: 'text', text: 'x' }] } } }),
        { 'A2A-Version': '0.3' },
      );
      expect({ id: answer.body.id, code: answer.body.error?.code }).toEqual({ id, code: -32001 });
    }
  });

  it('A2A - a contextId or a referenceTaskIds entry that is not a string does not reject the task: it runs, with its own id as its context', async () => {
    const send = async (extra: Record<string, unknown>) =>
      (await rpc(
        JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send', params: { message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'what is a session' }], ...extra } } }),
        { 'A2A-Version': '0.3' },
      )).body;
    const numeric = await send({ contextId: 5 });
    expect({ error: numeric.error, state: numeric.result?.status.state, contextId: numeric.result?.contextId }).toEqual({ error: undefined, state: 'completed', contextId: numeric.result?.id });
    expect(typeof numeric.result.contextId).toBe('string');
    // Read again (from this ingress's snapshot) it keeps that context; no session was stored for it.
    const got = (await rpc(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tasks/get', params: { id: numeric.result.id } }), { 'A2A-Version': '0.3' })).body;
    expect(got.result.contextId).toBe(numeric.result.id);
    const workflow = await (await fetch(`${f.url}/v1/workflows/${numeric.result.id}`, { headers: { authorization: `Bearer ${KEY}` } })).json() as any;
    expect(workflow.session_id).toBeNull();
    const referencing = await send({ referenceTaskIds: [5] });
    expect({ error: referencing.error, state: referencing.result?.status.state }).toEqual({ error: undefined, state: 'completed' });
  });

  it('A2A - resubscribing to, or messaging, a finished task is refused naming its state, not the enum number, under both protocol versions', async () => {
    const auth = { authorization: `Bearer ${KEY}` };
    const id = (await postJson(`${f.url}/v1/queries?wait=true`, { query: 'how does the hub keep its ledger' }, auth)).body.correlation_id as string;
    const raw = async (version: string, method: string, params: unknown) => {
      const res = await fetch(`${f.url}/a2a`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth, 'A2A-Version': version },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      });
      return res.text(); // a JSON-RPC error, or an SSE stream carrying one
    };
    const message03 = { message: { kind: 'message', messageId: randomUUID(), role: 'user', taskId: id, parts: [{ kind: 'text', text: 'more' }] } };
    const message10 = { message: { messageId: randomUUID(), role: 'ROLE_USER', taskId: id, parts: [{ text: 'more' }] } };
    const answers = [
      await raw('0.3', 'tasks/resubscribe', { id }),
      await raw('1.0', 'SubscribeToTask', { id }),
      await raw('0.3', 'message/send', message03),
      await raw('1.0', 'SendMessage', message10),
    ];
    for (const text of answers) {
      expect(text).toMatch(new RegExp(`Task ${id} is in a terminal state \\(completed\\) and cannot be (subscribed to|modified)`));
    }
  });

  it('A2A - refusing a subscription to a finished or unknown task prints nothing (the SDK printed a stack trace among the JSON log lines) and answers as the SDK did, under both protocol versions', async () => {
    const auth = { authorization: `Bearer ${KEY}` };
    const id = (await postJson(`${f.url}/v1/queries?wait=true`, { query: 'how does a task end' }, auth)).body.correlation_id as string;
    const printed: string[] = [];
    const spies = (['error', 'warn', 'log', 'info', 'debug', 'trace'] as const).map((level) =>
      jest.spyOn(console, level).mockImplementation((...args: unknown[]) => void printed.push(`${level}: ${args.map(String).join(' ')}`)),
    );
    const answers: Array<{ version: string; task: string; status: number; type: string | null; text: string }> = [];
    try {
      for (const [version, method] of [['0.3', 'tasks/resubscribe'], ['1.0', 'SubscribeToTask']]) {
        for (const task of [id, 'no-such-task']) {
          const res = await fetch(`${f.url}/a2a`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...auth, 'A2A-Version': version },
            body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params: { id: task } }),
          });
          answers.push({ version, task, status: res.status, type: res.headers.get('content-type'), text: await res.text() });
        }
      }
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
    expect(printed).toEqual([]);
    const finished = `Task ${id} is in a terminal state (completed) and cannot be subscribed to.`;
    const sse = (error: unknown) => `event: error\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: 7, error })}\n\n`;
    const info = (reason: string) => [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain: 'a2a-protocol.org' }];
    expect(answers).toEqual([
      { version: '0.3', task: id, status: 200, type: 'text/event-stream', text: sse({ code: -32004, message: finished }) },
      { version: '0.3', task: 'no-such-task', status: 200, type: 'text/event-stream', text: sse({ code: -32001, message: 'Task not found: no-such-task' }) },
      { version: '1.0', task: id, status: 200, type: 'application/json; charset=utf-8', text: JSON.stringify({ jsonrpc: '2.0', id: 7, error: { code: -32004, message: finished, data: info('UNSUPPORTED_OPERATION') } }) },
      { version: '1.0', task: 'no-such-task', status: 200, type: 'application/json; charset=utf-8', text: JSON.stringify({ jsonrpc: '2.0', id: 7, error: { code: -32001, message: 'Task not found: no-such-task', data: info('TASK_NOT_FOUND') } }) },
    ]);
  });

  it('A2A - a task id param that is not a string, or a 0.3 list param that is not an array, is a -32602 naming the field and the type, with the request id, under both protocol versions', async () => {
    const msg03 = (taskId: unknown) => ({ message: { kind: 'message', messageId: randomUUID(), role: 'user', taskId, parts: [{ kind: 'text', text: 'x' }] } });
    const msg10 = (key: string, taskId: unknown) => ({ message: { messageId: randomUUID(), role: 'ROLE_USER', [key]: taskId, parts: [{ text: 'x' }] } });
    const cases: Array<[version: string, method: string, params: unknown, expected: string]> = [
      ['0.3', 'tasks/get', { id: 5 }, 'id must be a string, not a number'],
      ['0.3', 'tasks/cancel', { id: 5 }, 'id must be a string, not a number'],
      ['0.3', 'tasks/cancel', { id: {} }, 'id must be a string, not an object'],
      ['0.3', 'tasks/resubscribe', { id: true }, 'id must be a string, not a boolean'],
      ['0.3', 'message/send', msg03(5), 'message.taskId must be a string, not a number'],
      ['0.3', 'message/stream', msg03(['t']), 'message.taskId must be a string, not an array'],
      ['1.0', 'GetTask', { id: 5 }, 'id must be a string, not a number'],
      ['1.0', 'CancelTask', { id: {} }, 'id must be a string, not an object'],
      ['1.0', 'SubscribeToTask', { id: 5 }, 'id must be a string, not a number'],
      ['1.0', 'SendMessage', msg10('taskId', 5), 'message.taskId must be a string, not a number'],
      ['1.0', 'SendStreamingMessage', msg10('task_id', {}), 'message.task_id must be a string, not an object'],
      // The 0.3 layer iterates list params as they are ("is not iterable", -32603).
      ['0.3', 'message/send', { message: { ...msg03(undefined).message, referenceTaskIds: 5 } }, 'message.referenceTaskIds must be an array, not a number'],
      ['0.3', 'message/stream', { message: { ...msg03(undefined).message, extensions: 'x' } }, 'message.extensions must be an array, not a string'],
      ['0.3', 'message/send', { ...msg03(undefined), configuration: { acceptedOutputModes: {} } }, 'configuration.acceptedOutputModes must be an array, not an object'],
    ];
    for (const [i, [version, method, params, expected]] of cases.entries()) {
      const id = `req-${i}`;
      const answer = await rpc(JSON.stringify({ jsonrpc: '2.0', id, method, params }), { 'A2A-Version': version });
      expect({ method, status: answer.status, id: answer.body.id, code: answer.body.error?.code, message: answer.body.error?.message }).toEqual({
        method,
        status: 200,
        id,
        code: -32602,
        message: `Invalid params: ${expected}`,
      });
    }
    // A batch is refused whole by the SDK, as before: its requests are not read one by one.
    const batch = await rpc(JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id: 5 } }]), { 'A2A-Version': '0.3' });
    expect(batch.body.error.code).toBe(-32600);
  });
});
