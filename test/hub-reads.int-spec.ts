import { HubSubjects } from '@chorus/envelope';
import { LogCapture } from '@chorus/testing';
import { getJson, postJson, startChorusFixture, type ChorusFixture } from './chorus.fixture';

/** Reads that arrive all at once must not take the hub's connection from its own work. */
describe('hub reads under load', () => {
  const logs = new LogCapture();
  let f: ChorusFixture;

  beforeAll(async () => {
    f = await startChorusFixture({ CHORUS_LOG_LEVEL: 'warn' }, {}, undefined, logs);
  });
  afterAll(async () => {
    await f?.stop();
  });

  it('hub reads - a replica that is connected but answers nothing (stopped, stalled) fails no read: each is asked again of another', async () => {
    const done = await postJson(`${f.url}/v1/queries?wait=true`, { query: 'what does a stalled hub answer' });
    expect(done.body.status).toBe('completed');
    const id = done.body.correlation_id as string;
    // To NATS a SIGSTOPped hub is this: a member of the hub's queue groups that takes requests and never answers.
    const nc = f.chorus.bus.nc;
    let swallowed = 0;
    const silent = [HubSubjects.Workflow, HubSubjects.History, HubSubjects.List, HubSubjects.Stats].map((subject) => nc.subscribe(subject, { queue: 'chorus-hub', callback: () => void (swallowed += 1) }));
    try {
      const paths = [`/v1/workflows/${id}`, `/v1/workflows/${id}/history`, '/v1/workflows', '/v1/stats'];
      const reads = await Promise.all(
        Array.from({ length: 40 }, async (_, i) => {
          const started = Date.now();
          const r = await getJson(`${f.url}${paths[i % paths.length]}`);
          return { status: r.status, ms: Date.now() - started, path: paths[i % paths.length] };
        }),
      );
      expect(reads.filter((r) => r.status !== 200)).toEqual([]);
      // Asked again every quarter second while the silent replica holds it: a read whose tries all go
      // there for 4 s (one in 2^16) would be slow; none waits out the whole request timeout (5 s).
      expect(Math.max(...reads.map((r) => r.ms))).toBeLessThan(4500);
      expect(swallowed).toBeGreaterThan(0);
    } finally {
      for (const sub of silent) sub.unsubscribe();
    }
  });

  it('hub reads - 200 concurrent HTTP history reads of one large workflow, each asked again while slow, share the hub\'s reads and are all answered', async () => {
    const done = await postJson(`${f.url}/v1/queries?wait=true`, { query: 'what does the hub keep about retries, duplicates and deadlines', top_k: 100 });
    expect(done.body.status).toBe('completed');
    const statuses = await Promise.all(Array.from({ length: 200 }, async () => { const r = await fetch(`${f.url}/v1/workflows/${done.body.correlation_id}/history`); return r.status === 200 ? 200 : `${r.status} ${await r.text()}`; }));
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
  }, 60_000);

  it('hub - a burst of history reads of a hundred workflows over NATS: each is answered or refused as busy, and the hub keeps its lease', async () => {
    // A hundred workflows, and eight reads of each at once: a read each takes a turn of the limit.
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) {
      const batch = await Promise.all(Array.from({ length: 10 }, (_, j) => postJson(`${f.url}/v1/queries?wait=true`, { query: `what does the hub keep about reads ${i} ${j}`, top_k: 30 })));
      for (const r of batch) ids.push(r.body.correlation_id);
    }
    const nc = f.chorus.bus.nc;
    const replies = await Promise.all(
      ids.flatMap((id) => Array.from({ length: 8 }, () => id)).map(async (id) => {
        try {
          const m = await nc.request(HubSubjects.History, JSON.stringify({ correlation_id: id, tenant_id: 'default' }), { timeout: 20_000 });
          const r = m.json<{ ok: boolean; data?: { envelopes: unknown[] }; error?: { code: string; retryable: boolean } }>();
          return r.ok ? (r.data!.envelopes.length > 0 ? 'ok' : 'empty') : `${r.error!.code} ${r.error!.retryable}`;
        } catch (e) {
          return String(e);
        }
      }),
    );
    expect([...new Set(replies)].filter((r) => r !== 'ok' && r !== 'HUB_BUSY true')).toEqual([]);
    expect(replies.filter((r) => r === 'ok').length).toBeGreaterThanOrEqual(8 * 72);
    // Its lease renewal, deadline sweeps and envelopes went on: it never stepped down.
    expect(logs.lines.filter((l) => /lease lost|deadline sweep failed/.test(String(l.msg))).map((l) => l.msg)).toEqual([]);
    const next = await postJson(`${f.url}/v1/queries?wait=true`, { query: 'is the hub still there' });
    expect(next.body.status).toBe('completed');
  }, 60_000);
});

describe('hub reads without a tenant', () => {
  let g: ChorusFixture;

  beforeAll(async () => {
    // No agents, and a long linger: a workflow's first ledger write waits a second for more envelopes.
    g = await startChorusFixture({ CHORUS_HUB_LINGER_MS: '1000' }, {}, ['hub', 'ingress']);
  });
  afterAll(async () => {
    await g?.stop();
  });

  it('hub - a read without a tenant while the workflow\'s first write is in progress waits for it, as one with its tenant does, instead of answering "no workflow"', async () => {
    const submitted = await postJson(`${g.url}/v1/queries`, { query: 'what does the hub keep', tenant_id: 'acme' });
    expect(submitted.status).toBe(202);
    const id = submitted.body.correlation_id as string;
    // Until the hub holds the query, "no workflow" is the truth: asked again until it is being applied.
    // That takes a few milliseconds; the write in progress then takes a second, which the reads wait
    // for (they answered "no workflow" throughout it, some fifty times at this pace).
    const deadline = Date.now() + 5000;
    let notFound = 0;
    let reply: { ok: boolean; data?: { tenant_id: string; status: string }; error?: { code: string } } | undefined;
    while (Date.now() < deadline) {
      const m = await g.chorus.bus.nc.request(HubSubjects.Workflow, JSON.stringify({ correlation_id: id }), { timeout: 5000 });
      reply = m.json();
      if (reply!.ok) break;
      expect(reply!.error!.code).toBe('WORKFLOW_NOT_FOUND');
      notFound += 1;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(reply).toEqual({ ok: true, data: expect.objectContaining({ tenant_id: 'acme', status: 'pending' }) });
    expect(notFound).toBeLessThan(10);
  });
});
