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

  it('hub - a burst of history reads of a large workflow over NATS: each is answered or refused as busy, and the hub keeps its lease', async () => {
    const done = await postJson(`${f.url}/v1/queries?wait=true`, { query: 'what does the hub keep about workflows, duplicates and retries', top_k: 100 });
    expect(done.body.status).toBe('completed');
    const nc = f.chorus.bus.nc;
    const request = JSON.stringify({ correlation_id: done.body.correlation_id, tenant_id: 'default' });
    const replies = await Promise.all(
      Array.from({ length: 800 }, async () => {
        try {
          const m = await nc.request(HubSubjects.History, request, { timeout: 20_000 });
          const r = m.json<{ ok: boolean; data?: { envelopes: unknown[] }; error?: { code: string; retryable: boolean } }>();
          return r.ok ? `ok ${r.data!.envelopes.length}` : `${r.error!.code} ${r.error!.retryable}`;
        } catch (e) {
          return String(e);
        }
      }),
    );
    const whole = (await getJson(`${f.url}/v1/workflows/${done.body.correlation_id}/history`)).body.envelopes.length;
    expect([...new Set(replies)].sort()).toEqual([`HUB_BUSY true`, `ok ${whole}`]);
    // Its lease renewal, deadline sweeps and envelopes went on: it never stepped down.
    expect(logs.lines.filter((l) => /lease lost|deadline sweep failed/.test(String(l.msg))).map((l) => l.msg)).toEqual([]);
    const next = await postJson(`${f.url}/v1/queries?wait=true`, { query: 'is the hub still there' });
    expect(next.body.status).toBe('completed');
  }, 60_000);
});
