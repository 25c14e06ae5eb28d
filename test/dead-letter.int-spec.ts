import type { DeadLetter } from '@chorus/bus';
import { waitFor } from '@chorus/testing';
import { postJson, startChorusFixture, type ChorusFixture } from './chorus.fixture';

describe('dead letters', () => {
  let f: ChorusFixture;

  beforeAll(async () => {
    f = await startChorusFixture();
  });
  afterAll(async () => {
    await f?.stop();
  });

  it('dead letters - a malformed envelope reaches the dead-letter subject with its validation errors, and the agents go on serving', async () => {
    const letters: DeadLetter[] = [];
    const sub = f.chorus.bus.nc.subscribe('chorus.dlq.>', { callback: (_e, m) => void letters.push(m.json<DeadLetter>()) });
    await f.chorus.bus.nc.flush();

    const malformed = { message_type: 'query', correlation_id: 'bad-1', tenant_id: 'default', payload: { query: '' }, attempt: 'first' };
    await f.chorus.bus.js.publish('chorus.wf.default.query.bad-1', JSON.stringify(malformed));
    await f.chorus.bus.js.publish('chorus.wf.default.classification_result.bad-2', 'not json at all');

    const good = await postJson(`${f.url}/v1/queries?wait=true`, { query: 'what happens to an invalid envelope' });
    expect(good.status).toBe(200);
    expect(good.body.status).toBe('completed');

    await waitFor(() => letters.length >= 2, { what: 'two dead letters' });
    sub.unsubscribe();
    const bad1 = letters.find((l) => l.correlation_id === 'bad-1')!;
    expect(bad1.reason).toBe('invalid_envelope');
    expect(bad1.subject).toBe('chorus.wf.default.query.bad-1');
    expect(bad1.errors.map((e) => e.field)).toEqual(
      expect.arrayContaining(['message_id', 'agent', 'status', 'timestamp', 'deadline', 'attempt', 'next_steps', 'schema_version', 'payload.query']),
    );
    expect(JSON.parse(bad1.data)).toEqual(malformed);
    const bad2 = letters.find((l) => l.correlation_id === 'bad-2')!;
    expect(bad2.errors[0].field).toBe('$');

    // Stored once each in the dead-letter stream, although the hub and the agent both rejected them.
    const dlq = await f.chorus.bus.jsm.streams.info(f.config.bus.deadLetterStream);
    expect(dlq.state.messages).toBe(2);
  });
});
