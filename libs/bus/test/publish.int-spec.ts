import { createEnvelope, workflowSubject } from '@chorus/envelope';
import { createRootLogger } from '@chorus/observability';
import { startNats, type NatsHandle } from '@chorus/testing';
import { Bus, defaultBusOptions } from '@chorus/bus';

const log = createRootLogger({ name: 'test', level: 'silent' });

describe('Bus.publish firstOnSubject', () => {
  let nats: NatsHandle;
  let bus: Bus;

  beforeAll(async () => {
    nats = await startNats();
    // A duplicate window of 100 ms: what firstOnSubject guards is a re-publish after the window.
    bus = await Bus.connect({ ...defaultBusOptions(), duplicateWindowMs: 100, servers: [nats.url], name: 'test' }, log);
    await bus.ensureTopology();
  });
  afterAll(async () => {
    await bus?.close();
    await nats?.stop();
  });

  const query = (id: string) =>
    createEnvelope({ messageType: 'query', correlationId: id, tenantId: 'acme', agent: 'hub', deadline: new Date(Date.now() + 10_000), payload: { query: 'q', top_k: 5, require_all: false } });

  it('firstOnSubject - stores the envelope only while its subject holds none, past the duplicate window too; a plain publish stores it again', async () => {
    const first = await bus.publish(query('fos-1'), { firstOnSubject: true, reportDuplicate: false });
    expect(first).toEqual(expect.objectContaining({ duplicate: false, seq: expect.any(Number) }));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const again = await bus.publish(query('fos-1'), { firstOnSubject: true, reportDuplicate: false });
    expect(again).toEqual(expect.objectContaining({ duplicate: true, seq: 0 }));
    const subject = workflowSubject('acme', 'query', 'fos-1');
    expect((await bus.jsm.streams.info(bus.options.workflowStream, { subjects_filter: subject })).state.subjects).toEqual({ [subject]: 1 });
    // Without the option, the same key after the window is a new message: what the option prevents.
    expect((await bus.publish(query('fos-1'), { reportDuplicate: false })).duplicate).toBe(false);
    expect((await bus.jsm.streams.info(bus.options.workflowStream, { subjects_filter: subject })).state.subjects).toEqual({ [subject]: 2 });
  });
});
