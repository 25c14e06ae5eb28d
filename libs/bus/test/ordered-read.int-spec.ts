import { createRootLogger } from '@chorus/observability';
import { startNats, waitFor, type NatsHandle } from '@chorus/testing';
import { Bus, KeyValueStore, defaultBusOptions } from '@chorus/bus';

const log = createRootLogger({ name: 'test', level: 'silent' });

describe('readOrdered (through KeyValueStore.keys)', () => {
  let nats: NatsHandle;
  let bus: Bus;

  beforeAll(async () => {
    nats = await startNats();
    bus = await Bus.connect({ ...defaultBusOptions(), servers: [nats.url], name: 'test' }, log);
  });
  afterAll(async () => {
    await bus?.close();
    await nats?.stop();
  });

  it('a read that a concurrent write of the same key overtakes still ends, without waiting for another write', async () => {
    // With one value kept per key, a write removes the value the read's consumer counted as pending:
    // the read must not wait for a message that will never come (it used to, until the key's next
    // write: about one read in six here).
    const kv = await KeyValueStore.open<{ n: number }>(bus, 'ordered_read_test', { history: 1, ttlMs: 0 });
    const slow: number[] = [];
    for (let i = 0; i < 30; i++) {
      const key = `tenant.k${i}`;
      await kv.put(key, { n: 0 });
      const started = Date.now();
      const read = kv.keys(`*.k${i}`);
      // One more write, at once or a moment later, then none: the read has nothing else to wake it.
      await new Promise((resolve) => setTimeout(resolve, i % 3));
      await kv.put(key, { n: 1 });
      const keys = await Promise.race([read, new Promise<null>((resolve) => setTimeout(() => resolve(null), 3000))]);
      if (keys === null) slow.push(i);
      else expect(keys).toEqual([key]);
      if (Date.now() - started > 3000) slow.push(i);
    }
    expect(slow).toEqual([]);
  }, 120_000);

  it('readOrdered - a finished read leaves no consumer on the server (it would stay there five minutes)', async () => {
    const kv = await KeyValueStore.open<{ n: number }>(bus, 'ordered_read_leftovers', { history: 1, ttlMs: 0 });
    for (let i = 0; i < 5; i++) await kv.put(`tenant.k${i}`, { n: i });
    const consumers = async () => (await bus.jsm.streams.info('KV_ordered_read_leftovers')).state.consumer_count;
    for (let i = 0; i < 20; i++) expect(await kv.keys('*.*')).toHaveLength(5);
    expect(await kv.keys('*.none')).toEqual([]);
    await waitFor(async () => ((await consumers()) === 0 ? true : undefined), { timeoutMs: 3000, what: 'no consumer left' });
  });

  it('KeyValueStore.latest - a key, or a pattern of one, read through the stream leader; null once deleted or when nothing matches', async () => {
    const kv = await KeyValueStore.open<{ n: number }>(bus, 'kv_latest', { history: 1, ttlMs: 0 });
    await kv.put('acme.wf1', { n: 1 });
    await kv.put('acme.wf1', { n: 2 });
    expect(await kv.latest('acme.wf1')).toEqual({ key: 'acme.wf1', value: { n: 2 }, revision: expect.any(Number) });
    expect((await kv.latest('*.wf1'))?.key).toBe('acme.wf1');
    expect(await kv.latest('*.nothing')).toBeNull();
    await kv.delete('acme.wf1');
    expect(await kv.latest('acme.wf1')).toBeNull();
  });
});
