import { createEnvelope, deriveEnvelope, parseEnvelope, StepFailedError, workflowSubject, type Envelope } from '@chorus/envelope';
import { createRootLogger } from '@chorus/observability';
import { LogCapture, startNats, waitFor, type NatsHandle } from '@chorus/testing';
import { Bus, JetStreamConsumer, defaultBusOptions, defaultConsumerOptions, ensureDurableConsumer, type DeadLetter } from '@chorus/bus';

const log = createRootLogger({ name: 'test', level: 'silent' });

function queryEnvelope(correlationId: string): Envelope<'query'> {
  return createEnvelope({
    messageType: 'query',
    correlationId,
    tenantId: 'acme',
    agent: 'ingress',
    deadline: new Date(Date.now() + 30_000),
    payload: { query: 'hello', top_k: 5, require_all: false },
  });
}

describe('JetStreamConsumer', () => {
  let nats: NatsHandle;
  let bus: Bus;

  beforeAll(async () => {
    nats = await startNats();
    bus = await Bus.connect({ ...defaultBusOptions(), servers: [nats.url], name: 'test' }, log);
    await bus.ensureTopology();
  });
  afterAll(async () => {
    await bus?.close();
    await nats?.stop();
  });

  async function collect(filter: string): Promise<{ items: unknown[]; stop: () => void }> {
    const items: unknown[] = [];
    const sub = bus.nc.subscribe(filter, { callback: (_e, m) => {
      items.push(JSON.parse(m.string()));
    } });
    await bus.nc.flush();
    return { items, stop: () => sub.unsubscribe() };
  }

  it('ensureDurableConsumer - a replica started with other settings than the consumer has says which, naming their variables, and sets its own', async () => {
    const spec = { stream: bus.options.workflowStream, durable: 'settings_probe', filter: 'chorus.wf.*.probe.*', ackWaitMs: 5000, maxDeliver: 5, concurrency: 64 };
    const logs = new LogCapture();
    const captured = createRootLogger({ name: 'test', level: 'info', destination: logs });
    await ensureDurableConsumer(bus, spec, captured);
    await ensureDurableConsumer(bus, spec, captured);
    expect(logs.lines).toEqual([]);
    const info = await ensureDurableConsumer(bus, { ...spec, maxDeliver: 2, concurrency: 500 }, captured);
    expect(info?.config.max_deliver).toBe(2);
    await waitFor(() => logs.lines.length > 0);
    expect(logs.lines).toEqual([
      expect.objectContaining({
        level: 40,
        consumer: 'settings_probe',
        changed: ['max_deliver 5 → 2 (CHORUS_MAX_DELIVER)', 'max_ack_pending 1000 → 2000 (CHORUS_CONCURRENCY)'],
        msg: expect.stringMatching(/every replica of an agent must be started with the same values/),
      }),
    ]);
    await bus.jsm.consumers.delete(spec.stream, spec.durable);
  });

  it('JetStreamConsumer - publishes what the handler returns with the same correlation id, then acks', async () => {
    const outputs = await collect('chorus.wf.acme.classification_result.*');
    const consumer = new JetStreamConsumer(bus, 'query', defaultConsumerOptions('echo'), async (env) =>
      deriveEnvelope(env, {
        messageType: 'classification_result',
        agent: 'echo',
        payload: {
          request: env.payload as never,
          search_text: 'hello',
          intent: 'lookup',
          entities: [],
          modality: 'keyword',
          complexity: 'simple',
          confidence: 0.5,
          explicit_profiles: [],
          signals: [],
        },
      }),
    log);
    await consumer.start();
    const input = queryEnvelope('wf-echo-1');
    await bus.publish(input);
    await waitFor(() => outputs.items.length === 1, { what: 'one output' });
    const out = parseEnvelope(outputs.items[0]);
    expect(out.ok).toBe(true);
    if (out.ok) {
      expect(out.value.correlation_id).toBe('wf-echo-1');
      expect(out.value.causation_id).toBe(input.message_id);
    }
    const info = await bus.jsm.consumers.info('CHORUS_WF', consumer.durable);
    await waitFor(async () => (await bus.jsm.consumers.info('CHORUS_WF', consumer.durable)).num_ack_pending === 0);
    expect(info.config.durable_name).toBe('echo_query');
    await consumer.stop();
    outputs.stop();
  });

  it('JetStreamConsumer - the handler signal aborts at the deadline, whether the handler looks at it before or after', async () => {
    const seen = new Map<string, { aborted: boolean; reason: string }>();
    const consumer = new JetStreamConsumer(bus, 'query', defaultConsumerOptions('deadline-signal'), async (env, ctx) => {
      // A new consumer is handed the earlier tests' queries too.
      if (!env.correlation_id.startsWith('wf-signal-')) return undefined;
      if (env.correlation_id === 'wf-signal-early') {
        const signal = ctx.signal;
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      } else {
        // Not touched until after the deadline has passed.
        await new Promise((r) => setTimeout(r, 3000));
      }
      seen.set(env.correlation_id, { aborted: ctx.signal.aborted, reason: String((ctx.signal.reason as Error)?.message) });
      return undefined;
    }, log);
    await consumer.start();
    try {
      // Far enough ahead to be delivered before it (an expired envelope is skipped, not handled).
      const deadline = new Date(Date.now() + 2000).toISOString();
      for (const id of ['wf-signal-early', 'wf-signal-late']) await bus.publish({ ...queryEnvelope(id), deadline });
      await waitFor(() => seen.size === 2, { timeoutMs: 15_000, what: 'both handlers done' });
      for (const id of ['wf-signal-early', 'wf-signal-late']) expect(seen.get(id)).toEqual({ aborted: true, reason: 'workflow deadline passed' });
    } finally {
      await consumer.stop();
    }
  }, 30_000);

  it('JetStreamConsumer - a redelivery of a message still being handled (ack_wait missed while busy) is not handled again', async () => {
    let calls = 0;
    let handled = 0;
    const consumer = new JetStreamConsumer(bus, 'query', { ...defaultConsumerOptions('busy'), ackWaitMs: 1000 }, async (env) => {
      handled += 1;
      if (env.correlation_id !== 'wf-busy-1') return undefined;
      calls += 1;
      // Busy: the event loop is blocked past ack_wait, so no progress reaches the server and it
      // sends the message again; the handler then goes on for a while.
      const until = Date.now() + 1500;
      while (Date.now() < until) {
        /* block */
      }
      await new Promise((r) => setTimeout(r, 1500));
      return undefined;
    }, log);
    await consumer.start();
    await bus.publish(queryEnvelope('wf-busy-1'));
    await waitFor(async () => calls === 1 && (await bus.jsm.consumers.info('CHORUS_WF', consumer.durable)).num_ack_pending === 0, { timeoutMs: 15_000, what: 'handled and acknowledged' });
    await new Promise((r) => setTimeout(r, 1500));
    expect(calls).toBe(1);
    // The server did deliver it again (more deliveries than handled messages): the copy was skipped.
    const info = await bus.jsm.consumers.info('CHORUS_WF', consumer.durable);
    expect(info.delivered.consumer_seq).toBeGreaterThan(handled);
    await consumer.stop();
  }, 30_000);

  it('JetStreamConsumer - dead-letters an invalid envelope with every invalid field and keeps serving', async () => {
    const letters = await collect('chorus.dlq.>');
    const handled: string[] = [];
    const consumer = new JetStreamConsumer(bus, 'query', defaultConsumerOptions('dlq-test'), async (env) => {
      handled.push(env.correlation_id);
    }, log);
    await consumer.start();
    await bus.js.publish(workflowSubject('acme', 'query', 'wf-bad-1'), JSON.stringify({ message_type: 'query', payload: { query: '' } }));
    await bus.publish(queryEnvelope('wf-good-1'));
    await waitFor(() => handled.includes('wf-good-1') && letters.items.length >= 1, { what: 'good handled and bad dead-lettered' });
    const letter = letters.items[0] as DeadLetter;
    expect(letter.reason).toBe('invalid_envelope');
    expect(letter.correlation_id).toBe('wf-bad-1');
    expect(letter.errors.map((e) => e.field)).toEqual(expect.arrayContaining(['message_id', 'tenant_id', 'payload.query']));
    expect(handled).not.toContain('wf-bad-1');
    await consumer.stop();
    letters.stop();
  });

  it('JetStreamConsumer - retries a retryable error with backoff, then reports the failure on the workflow', async () => {
    const reports = await collect('chorus.wf.acme.status_update.*');
    let calls = 0;
    const consumer = new JetStreamConsumer(
      bus,
      'query',
      { ...defaultConsumerOptions('flaky'), maxDeliver: 3, retryBaseMs: 20 },
      async (env) => {
        if (env.correlation_id === 'wf-flaky-1') calls += 1;
        throw new StepFailedError('BACKEND_DOWN', 'backend down', { retryable: true });
      },
      log,
    );
    await consumer.start();
    await bus.publish(queryEnvelope('wf-flaky-1'));
    await waitFor(() => reports.items.some((r) => (r as Envelope).correlation_id === 'wf-flaky-1'), { what: 'a failure report' });
    expect(calls).toBe(3);
    const report = reports.items.find((r) => (r as Envelope).correlation_id === 'wf-flaky-1') as Envelope<'status_update'>;
    expect(report.status).toBe('error');
    expect(report.agent).toBe('flaky');
    expect(report.error_details?.error_type).toBe('BACKEND_DOWN');
    expect(report.payload.step).toBe('query');
    await consumer.stop();
    reports.stop();
  });

  it('JetStreamConsumer - an invalid envelope from the handler is not published: the step fails at once, naming the fields', async () => {
    const reports = await collect('chorus.wf.acme.status_update.*');
    const outputs = await collect('chorus.wf.acme.classification_result.*');
    let calls = 0;
    const consumer = new JetStreamConsumer(
      bus,
      'query',
      { ...defaultConsumerOptions('sloppy'), maxDeliver: 3, retryBaseMs: 20 },
      async (env) => {
        if (env.correlation_id === 'wf-sloppy-1') calls += 1;
        // confidence out of range: the next agent and the hub would dead-letter it, and the workflow would wait out its deadline.
        return deriveEnvelope(env, {
          messageType: 'classification_result',
          agent: 'sloppy',
          payload: { request: env.payload as never, search_text: 'hello', intent: 'lookup', entities: [], modality: 'keyword', complexity: 'simple', confidence: 7, explicit_profiles: [], signals: [] },
        });
      },
      log,
    );
    await consumer.start();
    await bus.publish(queryEnvelope('wf-sloppy-1'));
    await waitFor(() => reports.items.some((r) => (r as Envelope).correlation_id === 'wf-sloppy-1'), { what: 'a failure report' });
    const report = reports.items.find((r) => (r as Envelope).correlation_id === 'wf-sloppy-1') as Envelope<'status_update'>;
    expect({ calls, type: report.error_details?.error_type, workflow_status: report.payload.workflow_status }).toEqual({ calls: 1, type: 'INVALID_OUTPUT', workflow_status: 'failed' });
    expect(report.error_details?.error_message).toMatch(/sloppy produced an invalid classification_result envelope \(payload\.confidence: /);
    expect(outputs.items.filter((o) => (o as Envelope).correlation_id === 'wf-sloppy-1')).toEqual([]);
    await consumer.stop();
    reports.stop();
    outputs.stop();
  });
});
