import { randomUUID } from 'node:crypto';
import { ClientProxyFactory, Transport, type ClientProxy } from '@nestjs/microservices';
import { firstValueFrom } from 'rxjs';
import { ChorusClient } from '@chorus/bus';
import { waitFor } from '@chorus/testing';
import { getJson, postJson, startChorusFixture, type ChorusFixture } from './chorus.fixture';
import { startApp, type AppProcess } from './processes';
import { readSse, type SseEvent } from './sse';

/** An A2A 0.3 `message/stream` or `tasks/resubscribe`: `first` once its first event is in, `all` (each event's JSON-RPC answer) once it ends. */
function a2aStream(url: string, method: string, params: unknown): { first: Promise<any>; all: Promise<Array<{ result?: any; error?: any }>> } {
  let onFirst!: (e: any) => void;
  const first = new Promise<any>((resolve) => (onFirst = resolve));
  const all = (async () => {
    const res = await fetch(`${url}/a2a`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) });
    let text = '';
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      text += Buffer.from(chunk).toString();
      if (text.includes('\n\n')) onFirst(JSON.parse(text.slice(text.indexOf('data: ') + 6, text.indexOf('\n\n'))));
    }
    onFirst(undefined);
    return text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)));
  })();
  return { first, all };
}

const lastText = (events: Array<{ result?: any }>) => events.at(-1)?.result?.status?.message?.parts?.[0]?.text as string | undefined;

describe('ingress shutdown', () => {
  let f: ChorusFixture;
  let ingress: AppProcess | undefined;

  beforeAll(async () => {
    // The hub and a second ingress (another replica) in this process; no agents: a query stays
    // pending until its deadline, two minutes away.
    f = await startChorusFixture({}, { monitoring: true }, ['hub', 'ingress']);
  });
  afterAll(async () => {
    await ingress?.stop('SIGKILL');
    await f?.stop();
  });

  it('?wait=true whose client leaves - its wait ends, and the subscription it held goes with it, not at the deadline', async () => {
    // The subscriptions of one workflow's waiters, on the server (status_update.<id>, no wildcard).
    const waiters = async (): Promise<string[]> => {
      const connz = (await (await fetch(`${f.nats.monitorUrl}/connz?subs=1`)).json()) as { connections: Array<{ subscriptions_list?: string[] }> };
      return connz.connections.flatMap((c) => c.subscriptions_list ?? []).filter((s) => /\.status_update\.[A-Za-z0-9_-]+$/.test(s));
    };
    expect(await waiters()).toEqual([]);
    const left = new AbortController();
    const waiting = fetch(`${f.url}/v1/queries?wait=true`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'who leaves before the answer', deadline_ms: 120_000 }),
      signal: left.signal,
    }).catch((e: Error) => e.name);
    await waitFor(async () => ((await waiters()).length === 1 ? true : undefined), { what: "the wait's subscription" });
    left.abort();
    expect(await waiting).toBe('AbortError');
    await waitFor(async () => ((await waiters()).length === 0 ? true : undefined), { timeoutMs: 3000, what: 'the subscription gone' });
  });

  it('ingress process on SIGTERM - ends event streams, A2A streams and waits at once (the workflows go on) and exits within seconds', async () => {
    ingress = startApp('ingress', { NATS_URL: f.nats.url, CHORUS_HTTP_PORT: '0', CHORUS_LOG_LEVEL: 'info' });
    const [, url] = await ingress.waitFor(/"url":"(http:\/\/[^"]+)","msg":"ingress listening"/);
    await ingress.waitFor(/ingress ready/);

    const followed = (await postJson(`${url}/v1/queries`, { query: 'who follows this one', deadline_ms: 120_000 })).body.correlation_id as string;
    let onStep!: (e: SseEvent) => void;
    const firstStep = new Promise<SseEvent>((resolve) => (onStep = resolve));
    const stream = readSse(`${url}/v1/workflows/${followed}/events`, {}, 30_000, (e) => e.event === 'step' && onStep(e));
    const waiting = postJson(`${url}/v1/queries?wait=true`, { query: 'who waits for the answer', deadline_ms: 120_000 });
    const message = { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'who streams over a2a' }], metadata: { deadline_ms: 120_000 } };
    const sent = a2aStream(url, 'message/stream', { message });
    const resubscribed = a2aStream(url, 'tasks/resubscribe', { id: followed });
    const blocking = postJson(`${url}/a2a`, { jsonrpc: '2.0', id: 2, method: 'message/send', params: { message: { ...message, messageId: randomUUID() } } });
    // More open streams than Node's default listener limit (10) on what ends them all: no
    // MaxListenersExceededWarning, a raw line among the JSON logs (found by the failure-under-load exploration).
    const more = Array.from({ length: 12 }, () => {
      let opened!: () => void;
      const open = new Promise<void>((resolve) => (opened = resolve));
      return { open, done: readSse(`${url}/v1/workflows/${followed}/events`, {}, 30_000, () => opened()) };
    });
    await Promise.all(more.map((m) => m.open));
    const step = await firstStep;
    await Promise.all([sent.first, resubscribed.first]);
    // Every one of them under way: the hub has recorded the wait's workflow and the A2A tasks' too.
    await waitFor(async () => ((await getJson(`${f.url}/v1/workflows`)).body.workflows.length >= 4 ? true : undefined), { what: 'four workflows recorded' });

    const started = Date.now();
    const exited = ingress.stop('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const code = await Promise.race([exited, new Promise((r) => (timer = setTimeout(() => r('still running after 10 s'), 10_000)))]).finally(() => clearTimeout(timer));
    expect({ code, withinSeconds: Date.now() - started < 5_000 }).toEqual({ code: 0, withinSeconds: true });

    // The event stream ended without a terminal event, saying why in an SSE comment.
    const ended = await stream;
    expect(ended.events.filter((e) => e.event === 'terminal' || e.event === 'unconfirmed')).toEqual([]);
    expect(ended.text.endsWith(': shutting down: reconnect with Last-Event-ID to resume\n\n')).toBe(true);
    // The wait got the answer of a wait that ended without an end: where to follow its workflow, which goes on.
    const answer = await waiting;
    expect(answer.status).toBe(504);
    expect(answer.body).toEqual(expect.objectContaining({ status_url: `/v1/workflows/${answer.body.correlation_id}`, workflow: expect.objectContaining({ correlation_id: answer.body.correlation_id, status: 'pending' }) }));
    expect(answer.body.message).toMatch(/^this ingress is shutting down: workflow \S+ goes on; follow it at its status_url$/);
    expect(answer.headers.get('location')).toBe(`/v1/workflows/${answer.body.correlation_id}`);
    // The A2A streams ended with the task still working, saying how to follow it.
    for (const events of [await sent.all, await resubscribed.all]) {
      expect(events.at(-1)?.result?.status?.state).toBe('working');
      expect(lastText(events)).toMatch(/^this ingress is shutting down: the task goes on; resubscribe/);
    }
    // A blocking message/send answers with its task, still working, saying the same.
    const task = (await blocking).body.result;
    expect(task.status.state).toBe('working');
    expect(task.status.message.parts[0].text).toMatch(/^this ingress is shutting down: the task goes on; resubscribe/);
    expect(ingress.output()).toMatch(/"msg":"stopped"/);
    await Promise.all(more.map((m) => m.done));
    expect(ingress.output()).not.toMatch(/MaxListenersExceededWarning/);

    // The workflows go on: the other replica resumes the event stream after the step received.
    const other = await getJson(`${f.url}/v1/workflows/${answer.body.correlation_id}`);
    expect(other.body.status).toBe('pending');
    const resumed = readSse(`${f.url}/v1/workflows/${followed}/events`, { 'last-event-id': step.id! }, 15_000);
    expect((await postJson(`${f.url}/v1/workflows/${followed}/cancel`, {})).status).toBe(202);
    const rest = await resumed;
    expect(rest.events.filter((e) => e.event === 'step').map((e) => e.id)).not.toContain(step.id);
    expect(rest.events.at(-1)).toEqual(expect.objectContaining({ event: 'terminal', data: expect.objectContaining({ status: 'cancelled' }) }));
  });
});

describe('ingress shutdown: a stock NestJS ClientProxy waiting', () => {
  let f: ChorusFixture;
  let ingress: AppProcess | undefined;
  let client: ClientProxy | undefined;

  beforeAll(async () => {
    // The hub alone in this process: the ingress process is the only one serving chorus.query.
    f = await startChorusFixture({}, {}, ['hub']);
  });
  afterAll(async () => {
    await client?.close();
    await ingress?.stop('SIGKILL');
    await f?.stop();
  });

  it("ClientProxy send('chorus.query') waiting when its ingress stops - answered at once with where its workflow is, not left to time out", async () => {
    ingress = startApp('ingress', { NATS_URL: f.nats.url, CHORUS_HTTP_PORT: '0', CHORUS_LOG_LEVEL: 'info' });
    await ingress.waitFor(/ingress ready/);
    client = ClientProxyFactory.create({ transport: Transport.NATS, options: { servers: [f.nats.url] } });
    await client.connect();
    const answer = firstValueFrom(client.send('chorus.query', { query: 'who waits over nest', deadline_ms: 120_000 })).then(
      () => null,
      (e: { message: string; correlation_id: string }) => e,
    );
    const client0 = new ChorusClient(f.chorus.bus, { agent: 'test', correlation: f.config.correlation, defaultDeadlineMs: 10_000, defaultTopK: 5, requestTimeoutMs: 5000, terminalGraceMs: 1000 });
    await waitFor(async () => ((await client0.list({ tenant_id: 'default', limit: 10 })).workflows.length === 1 ? true : undefined), { what: 'the workflow recorded' });
    const started = Date.now();
    expect(await ingress.stop('SIGTERM')).toBe(0);
    const refused = await answer;
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(refused?.message).toMatch(/^this ingress is shutting down: workflow \S+ goes on; read it with a request to chorus\.hub\.workflow/);
    expect((await client0.workflow(refused!.correlation_id, 'default'))?.status).toBe('pending');
  });
});
