import { postJson, startChorusFixture, type ChorusFixture } from './chorus.fixture';

/** What a NATS server that lost Chorus's streams (restarted without its store, or emptied by hand) leaves, and how Chorus comes back from it. */
describe('streams gone from the NATS server', () => {
  let f: ChorusFixture;

  beforeAll(async () => {
    f = await startChorusFixture({}, { own: true });
  });
  afterAll(async () => {
    await f?.stop();
  });

  it('the hub makes the streams and buckets again, and queries run again without a restart (every query was refused and the lease never renewed, until Chorus was restarted: found by the operations exploration)', async () => {
    const before = await postJson(`${f.url}/v1/queries?wait=true`, { query: 'what is the correlation hub' });
    expect({ status: before.status, workflow: before.body.status }).toEqual({ status: 200, workflow: 'completed' });

    // A store lost: every stream and bucket goes, with their consumers.
    const names: string[] = [];
    for await (const s of f.chorus.bus.jsm.streams.list()) names.push(s.config.name);
    expect(names).toEqual(expect.arrayContaining([f.config.bus.workflowStream, 'KV_chorus_leases']));
    for (const name of names) await f.chorus.bus.jsm.streams.delete(name);

    // The hub checks every 5 s; an agent makes its consumer again after it has been gone for 2.5 of its checks (10 s each).
    const until = Date.now() + 100_000;
    let last: { status: number; body: Record<string, unknown> } | undefined;
    while (Date.now() < until) {
      last = await postJson(`${f.url}/v1/queries?wait=true`, { query: 'how are duplicates dropped' });
      if (last.status === 200 && last.body.status === 'completed') break;
      await new Promise((r) => setTimeout(r, 1000));
    }
    expect({ status: last?.status, workflow: last?.body.status }).toEqual({ status: 200, workflow: 'completed' });
    const remade: string[] = [];
    for await (const s of f.chorus.bus.jsm.streams.list()) remade.push(s.config.name);
    expect(remade.sort()).toEqual(names.sort());
  }, 150_000);
});
