import { createRootLogger } from '@chorus/observability';
import { startNats, type NatsHandle } from '@chorus/testing';
import { Bus, defaultBusOptions, readWorkflowHistory } from '@chorus/bus';

const log = createRootLogger({ name: 'test', level: 'silent' });

describe('readWorkflowHistory', () => {
  let nats: NatsHandle;
  let bus: Bus;

  beforeAll(async () => {
    nats = await startNats({ own: true });
    bus = await Bus.connect({ ...defaultBusOptions(), servers: [nats.url], name: 'test' }, log);
    await bus.ensureTopology();
  });
  afterAll(async () => {
    await bus?.close();
    await nats?.stop();
  });

  /** Publishes raw bodies, in this order, on workflow subjects; returns their sequences. */
  async function store(messages: Array<[subject: string, body: unknown, msgID?: string]>): Promise<number[]> {
    const seqs: number[] = [];
    for (const [subject, body, msgID] of messages) {
      seqs.push((await bus.js.publish(subject, typeof body === 'string' ? body : JSON.stringify(body), msgID ? { msgID } : {})).seq);
    }
    return seqs;
  }

  it("reads every message type's subject of the workflow, in stream order, and no other workflow's or tenant's", async () => {
    const seqs = await store([
      ['chorus.wf.acme.query.h1', { n: 1 }, 'h1.query'],
      ['chorus.wf.acme.status_update.h1', { n: 2 }],
      ['chorus.wf.acme.query.h2', { other: 'workflow' }],
      ['chorus.wf.other.query.h1', { other: 'tenant' }],
      ['chorus.wf.acme.classification_result.h1', 'not json'],
      ['chorus.wf.acme.status_update.h1', { n: 4 }],
      ['chorus.wf.acme.orchestration_command.h1', { n: 5 }],
      ['chorus.wf.acme.response.h1', { n: 6 }],
    ]);
    const history = await readWorkflowHistory(bus, 'h1', { tenantId: 'acme' });
    expect(history.map((e) => [e.seq, e.subject])).toEqual([
      [seqs[0], 'chorus.wf.acme.query.h1'],
      [seqs[1], 'chorus.wf.acme.status_update.h1'],
      [seqs[4], 'chorus.wf.acme.classification_result.h1'],
      [seqs[5], 'chorus.wf.acme.status_update.h1'],
      [seqs[6], 'chorus.wf.acme.orchestration_command.h1'],
      [seqs[7], 'chorus.wf.acme.response.h1'],
    ]);
    expect(history[0]).toEqual({ seq: seqs[0], subject: 'chorus.wf.acme.query.h1', stored_at: expect.any(String), envelope: { n: 1 }, idempotency_key: 'h1.query' });
    expect(history[2].envelope).toEqual({ unparseable: Buffer.from('not json').toString('base64') });
    expect(history[1].idempotency_key).toBeUndefined();
    // Without the tenant, one read of every tenant's subjects for the id.
    expect((await readWorkflowHistory(bus, 'h1')).map((e) => e.seq)).toEqual([seqs[0], seqs[1], seqs[3], seqs[4], seqs[5], seqs[6], seqs[7]]);
    expect(await readWorkflowHistory(bus, 'nothing', { tenantId: 'acme' })).toEqual([]);
    // From a sequence on, with the tenant and without.
    expect((await readWorkflowHistory(bus, 'h1', { tenantId: 'acme', fromSeq: seqs[5] })).map((e) => e.seq)).toEqual([seqs[5], seqs[6], seqs[7]]);
    expect((await readWorkflowHistory(bus, 'h1', { fromSeq: seqs[3] })).map((e) => e.seq)).toEqual([seqs[3], seqs[4], seqs[5], seqs[6], seqs[7]]);
  });

  it('a subject holding more messages than are fetched one by one is read to its end through a consumer', async () => {
    const messages: Array<[string, unknown]> = [];
    for (let i = 0; i < 40; i++) messages.push([`chorus.wf.acme.${i % 4 === 0 ? 'status_update' : 'orchestration_command'}.flood`, { i }]);
    await store(messages);
    const history = await readWorkflowHistory(bus, 'flood', { tenantId: 'acme' });
    expect(history.map((e) => (e.envelope as { i: number }).i)).toEqual(Array.from({ length: 40 }, (_, i) => i));
    expect((await bus.jsm.streams.info(bus.options.workflowStream)).state.consumer_count).toBeLessThanOrEqual(1);
  });

  it('since leaves out what was stored before it', async () => {
    await store([['chorus.wf.acme.query.reused', { before: true }]]);
    await new Promise((resolve) => setTimeout(resolve, 30));
    const since = new Date();
    await new Promise((resolve) => setTimeout(resolve, 30));
    await store([['chorus.wf.acme.query.reused', { after: true }]]);
    expect((await readWorkflowHistory(bus, 'reused', { tenantId: 'acme', since })).map((e) => e.envelope)).toEqual([{ after: true }]);
    expect((await readWorkflowHistory(bus, 'reused', { since })).map((e) => e.envelope)).toEqual([{ after: true }]);
    expect(await readWorkflowHistory(bus, 'reused', { tenantId: 'acme' })).toHaveLength(2);
  });

  it('a read while the workflow is published to is a prefix of its trail: no later message without every earlier one', async () => {
    // Seven types at once, 16 times or more: every subject is read by message gets alone. Publishing
    // goes on until more than 10 reads were made meanwhile (on a loaded machine a read takes longer).
    const types = ['query', 'classification_result', 'execution_plan', 'tool_results', 'response', 'status_update', 'orchestration_command'];
    const stored: number[] = [];
    const reads: number[][] = [];
    let done = false;
    const publisher = (async () => {
      for (let i = 0; i < 16 || (reads.length <= 10 && i < 400); i++) {
        stored.push(...(await Promise.all(types.map(async (type) => (await bus.js.publish(`chorus.wf.acme.${type}.busy`, JSON.stringify({ i }))).seq))));
        await new Promise((r) => setTimeout(r, 10));
      }
      done = true;
    })();
    while (!done) reads.push((await readWorkflowHistory(bus, 'busy', { tenantId: 'acme' })).map((e) => e.seq));
    await publisher;
    const all = [...stored].sort((a, b) => a - b);
    const gaps = reads.filter((seqs) => seqs.join() !== all.filter((seq) => seq <= (seqs.at(-1) ?? 0)).join()).map((seqs) => seqs.join());
    expect(reads.length).toBeGreaterThan(10);
    expect(gaps).toEqual([]);
  });

  it('an envelope near the size limit is read whole', async () => {
    const big = { text: 'x'.repeat(900_000) };
    await store([['chorus.wf.acme.tool_results.big', big]]);
    const [entry] = await readWorkflowHistory(bus, 'big', { tenantId: 'acme' });
    expect(entry.envelope).toEqual(big);
  });
});
