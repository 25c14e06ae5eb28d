import { createServer } from 'node:net';
import { startNats, type NatsHandle } from '@chorus/testing';
import { postJson } from './chorus.fixture';
import { startApp, type AppProcess } from './processes';

describe('Chorus as processes', () => {
  let nats: NatsHandle;
  const apps: AppProcess[] = [];

  beforeAll(async () => {
    nats = await startNats();
  });
  afterAll(async () => {
    await Promise.all(apps.map((a) => a.stop()));
    await nats?.stop();
  });

  it('one process per app - each app runs alone and together they complete a query', async () => {
    const env = { NATS_URL: nats.url, CHORUS_HTTP_PORT: '0', CHORUS_LOG_LEVEL: 'debug', CHORUS_OPS_PORT: '0' };
    const agents = ['profile', 'hub', 'intent', 'planner', 'search', 'responder'].map((app) => startApp(app, env));
    apps.push(...agents);
    await Promise.all(agents.map((p) => p.waitFor(/ ready"/)));
    const ingress = startApp('ingress', env);
    apps.push(ingress);
    const [, url] = await ingress.waitFor(/"url":"(http:\/\/[^"]+)","msg":"ingress listening"/);
    await ingress.waitFor(/ingress ready/);

    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const r = await postJson(`${url}/v1/queries?wait=true`, { query: 'how does the search worker fuse rankings' }, { traceparent: `00-${traceId}-00f067aa0ba902b7-01` });
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('completed');
    expect({ used: r.body.result.provenance.profiles_used.sort(), degradations: r.body.degradations }).toEqual({ used: ['bm25', 'trigram'], degradations: [] });

    for (const p of apps) expect(p.child.exitCode).toBeNull();

    // One trace across every hop: each envelope a new span of the caller's trace.
    const history = (await (await fetch(`${url}/v1/workflows/${r.body.correlation_id}/history`)).json()) as { envelopes: Array<{ traceparent: string }> };
    const spans = history.envelopes.map((e) => e.traceparent.split('-'));
    expect(spans.every((p) => p[1] === traceId)).toBe(true);
    expect(new Set(spans.map((p) => p[2])).size).toBe(spans.length);

    // Every app logged this workflow, and every line that is about it carries its correlation_id.
    const id = r.body.correlation_id as string;
    await new Promise((res) => setTimeout(res, 300));
    for (const p of apps) {
      const lines = p.output().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
      const about = lines.filter((l) => JSON.stringify(l).includes(id));
      if (p !== apps[0]) expect(about.length).toBeGreaterThan(0); // the profile process logs no per-request lines
      for (const line of about) expect(line.correlation_id).toBe(id);
    }

    // A documented refusal (a finished task cannot be subscribed to) leaves the ingress's output
    // JSON, line for line: the A2A SDK printed it with its stack trace.
    const refused = await fetch(`${url}/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tasks/resubscribe', params: { id } }),
    });
    expect(await refused.text()).toMatch(/is in a terminal state \(completed\) and cannot be subscribed to/);
    await ingress.waitFor(/"url":"\/a2a".*"statusCode":200/);
    // As is a follow-up message streamed to that finished task, which the SDK refuses and prints itself.
    const followUp = await fetch(`${url}/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'message/stream', params: { message: { kind: 'message', messageId: 'm5', role: 'user', taskId: id, parts: [{ kind: 'text', text: 'and then?' }] } } }),
    });
    expect(await followUp.text()).toMatch(/error/);
    await ingress.waitFor(/"source":"@a2a-js\/sdk"/);
    expect(ingress.output().split('\n').filter((line) => line !== '' && !isJsonObject(line))).toEqual([]);

    // Every app run alone serves /health, /ready and /metrics on CHORUS_OPS_PORT.
    const intent = agents[2];
    const [, ops] = await intent.waitFor(/"url":"(http:\/\/[^"]+)","msg":"health, readiness and metrics listening"/);
    expect(await (await fetch(`${ops}/health`)).json()).toEqual({ status: 'ok' });
    expect((await fetch(`${ops}/ready`)).status).toBe(200);
    const metrics = await (await fetch(`${ops}/metrics`)).text();
    expect(metrics).toMatch(/chorus_envelopes_total\{[^}]*agent="intent"[^}]*outcome="ok"[^}]*\} 1/);

    // The ingress too (it ignored CHORUS_OPS_PORT), and keeps serving them on its HTTP port.
    const [, ingressOps] = await ingress.waitFor(/"url":"(http:\/\/[^"]+)","msg":"health, readiness and metrics listening"/);
    expect(ingressOps).not.toBe(url);
    for (const base of [ingressOps, url]) {
      expect(await (await fetch(`${base}/health`)).json()).toEqual({ status: 'ok' });
      expect((await fetch(`${base}/ready`)).status).toBe(200);
      expect(await (await fetch(`${base}/metrics`)).text()).toMatch(/chorus_http_responses_total\{[^}]*status="200"[^}]*\} \d+/);
    }
  });

  it('processes - stop gracefully on SIGTERM', async () => {
    const codes = await Promise.all(apps.splice(0).map((a) => a.stop('SIGTERM')));
    expect(codes.every((c) => c === 0)).toBe(true);
  });

  it('npm start (the all-in-one launcher) - prints where the ingress listens and a ready line, then answers', async () => {
    const chorus = startApp('chorus', { NATS_URL: nats.url, CHORUS_HTTP_PORT: '0', CHORUS_LOG_LEVEL: 'warn' });
    apps.push(chorus);
    const [, url] = await chorus.waitFor(/Chorus ingress listening on (http:\/\/\S+)/);
    await chorus.waitFor(/Chorus ready: profiles\(bm25,trigram\), hub, intent, planner, search, responder, ingress/);
    const r = await postJson(`${url}/v1/queries?wait=true`, { query: 'what does npm start do' });
    expect(r.body.status).toBe('completed');
    expect(await chorus.stop('SIGINT')).toBe(0);
  });

  it('npm start - with NATS_URL pointing nowhere, exits 1 saying what it could not reach', async () => {
    const chorus = startApp('chorus', { NATS_URL: 'nats://127.0.0.1:1', CHORUS_LOG_LEVEL: 'silent' });
    apps.push(chorus);
    const code = await new Promise<number | null>((resolve) => chorus.child.once('exit', resolve));
    expect(code).toBe(1);
    expect(chorus.output()).toMatch(/^Chorus did not start: no NATS server answers at nats:\/\/127\.0\.0\.1:1 \(connection refused\): start nats-server with -js there, or set NATS_URL to where one runs$/m);
  });

  it('processes - an app whose port is taken exits 1 naming the setting, the port and what to do: CHORUS_HTTP_PORT (the ingress), CHORUS_OPS_PORT (the others)', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as { port: number };
    try {
      const env = { NATS_URL: nats.url, CHORUS_LOG_LEVEL: 'silent' };
      const ingress = startApp('ingress', { ...env, CHORUS_HTTP_PORT: String(port) });
      const intent = startApp('intent', { ...env, CHORUS_OPS_PORT: String(port) });
      apps.push(ingress, intent);
      const codes = await Promise.all([ingress, intent].map((p) => new Promise<number | null>((resolve) => p.child.once('exit', resolve))));
      expect(codes).toEqual([1, 1]);
      expect(ingress.output()).toMatch(new RegExp(`^CHORUS_HTTP_PORT ${port} is in use by another process \\(127\\.0\\.0\\.1:${port}\\): choose another port$`, 'm'));
      expect(intent.output()).toMatch(new RegExp(`^CHORUS_OPS_PORT ${port} is in use by another process \\(127\\.0\\.0\\.1:${port}\\): choose another port$`, 'm'));
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it('npm start - an app that fails leaves the others running (DEGRADED); when none starts, it exits 1 with each reason', async () => {
    const env = { NATS_URL: nats.url, CHORUS_HTTP_PORT: '0', CHORUS_LOG_LEVEL: 'silent', CHORUS_CORPUS: '/nonexistent/corpus.jsonl' };
    const degraded = startApp('chorus', { ...env, CHORUS_APPS: 'profiles,hub' });
    apps.push(degraded);
    await degraded.waitFor(/Chorus running DEGRADED: hub started; failed: profiles: corpus file not found: \/nonexistent\/corpus\.jsonl \(CHORUS_CORPUS\)/);
    expect(degraded.child.exitCode).toBeNull();
    expect(await degraded.stop('SIGINT')).toBe(1);

    const none = startApp('chorus', { ...env, CHORUS_APPS: 'profiles' });
    apps.push(none);
    const code = await new Promise<number | null>((resolve) => none.child.once('exit', resolve));
    expect(code).toBe(1);
    expect(none.output()).toMatch(/Chorus did not start: every app failed: profiles: corpus file not found/);
  });
});

function isJsonObject(line: string): boolean {
  try {
    return typeof JSON.parse(line) === 'object';
  } catch {
    return false;
  }
}
