import { Bus, defaultBusOptions } from '@chorus/bus';
import { CUT_MARK } from '@chorus/correlation';
import { isTerminalStatus, type WorkflowView } from '@chorus/envelope';
import { getJson, postJson, startChorusFixture, type ChorusFixture } from './chorus.fixture';

/**
 * A NATS server whose `max_payload` is small (16 KiB; the default is 1 MiB): what a message can
 * hold is then less than what the HTTP API accepts.
 */
describe('a NATS server with a small max_payload', () => {
  let f: ChorusFixture;

  beforeAll(async () => {
    f = await startChorusFixture({}, { own: true, extraConfig: 'max_payload: 16384' });
  });
  afterAll(async () => {
    await f?.stop();
  });

  it('small max_payload - a workflow whose record is too large for one message ends in one terminal state that can be read, its query cut to fit', async () => {
    // 3,700 emoji: within the API's 4,000 characters, 14.8 KB of UTF-8.
    const query = `hub ${'😀'.repeat(3700)}`;
    const submitted = await postJson(`${f.url}/v1/queries?wait=true`, { query, deadline_ms: 5000 });
    expect(submitted.status).toBe(200);
    const view = submitted.body as WorkflowView;
    expect(isTerminalStatus(view.status)).toBe(true);
    expect(view.query?.endsWith(CUT_MARK)).toBe(true);
    expect(query.startsWith(view.query!.slice(0, -CUT_MARK.length))).toBe(true);
    const read = await getJson(`${f.url}/v1/workflows/${view.correlation_id}`);
    expect({ status: read.status, workflow: read.body.status }).toEqual({ status: 200, workflow: view.status });
  });

  it('small max_payload - a query whose envelope does not fit in one message is a 413 saying so, and starts nothing', async () => {
    // Within the API's limits (4,000 characters, 64 KiB), but 16 KB of UTF-8 and the envelope's fields.
    const res = await postJson(`${f.url}/v1/queries`, { query: `hub ${'😀'.repeat(3990)}` });
    expect(res.status).toBe(413);
    expect(res.body.message).toMatch(/max_payload \(16384 bytes\)/);
    expect(res.body.message).toMatch(/nothing was done/);
  });
});

/** A JetStream whose store is full: nothing more can be stored until space is freed. */
describe('a JetStream store that is full', () => {
  let f: ChorusFixture;

  beforeAll(async () => {
    f = await startChorusFixture({}, { own: true, jetstreamConfig: 'max_file_store: 4MB' });
  });
  afterAll(async () => {
    await f?.stop();
  });

  it('storage full - a stream byte limit the store cannot set aside fails the start naming the stream and the setting', async () => {
    const other = await Bus.connect({ ...defaultBusOptions(), servers: [f.nats.url], name: 'limits', workflowMaxBytes: 64 * 1024 * 1024 }, f.log);
    try {
      await expect(other.ensureTopology()).rejects.toThrow(/^stream CHORUS_WF: JetStream cannot set aside its byte limit, 67108864 bytes \(.*insufficient.*\): lower it \(CHORUS_STREAM_MAX_BYTES\), or give the server more room \(max_file_store\)$/);
    } finally {
      await other.close();
    }
  });

  it('storage full - a submission is answered 503 at once, saying the store is full; /ready says so; once space is freed both recover', async () => {
    const { bus } = f.chorus;
    // Fill what is left of the store with another stream's messages.
    await bus.jsm.streams.add({ name: 'FILLER', subjects: ['filler.>'] });
    const block = new Uint8Array(64 * 1024);
    for (let i = 0; ; i++) {
      const refused = await bus.js.publish(`filler.${i}`, block).then(
        () => null,
        (e: Error) => e,
      );
      if (refused) {
        expect(refused.message).toMatch(/insufficient resources/);
        break;
      }
    }
    const started = Date.now();
    const res = await postJson(`${f.url}/v1/queries`, { query: 'what does the hub keep' });
    expect({ status: res.status, retryAfter: res.headers.get('retry-after') }).toEqual({ status: 503, retryAfter: '30' });
    expect(res.body.message).toMatch(/message store \(JetStream\) is full/);
    // Not retried for seconds as an outage is.
    expect(Date.now() - started).toBeLessThan(2000);
    const ready = await getJson(`${f.url}/ready`);
    expect(ready.status).toBe(503);
    expect(JSON.stringify(ready.body)).toMatch(/storage full/);
    await bus.jsm.streams.delete('FILLER');
    expect((await postJson(`${f.url}/v1/queries`, { query: 'what does the hub keep' })).status).toBe(202);
    expect((await getJson(`${f.url}/ready`)).status).toBe(200);
  });
});
