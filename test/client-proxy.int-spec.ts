import { ClientProxyFactory, Transport, type ClientProxy } from '@nestjs/microservices';
import { firstValueFrom } from 'rxjs';
import { headers } from '@nats-io/transport-node';
import { createEnvelope, type WorkflowView } from '@chorus/envelope';
import { LogCapture, waitFor } from '@chorus/testing';
import { startChorusFixture, type ChorusFixture } from './chorus.fixture';

/** A NestJS app that knows nothing of Chorus but its NATS address, using the stock NATS transport. */
describe('stock NestJS ClientProxy', () => {
  let f: ChorusFixture;
  let client: ClientProxy;
  const logs = new LogCapture();

  beforeAll(async () => {
    f = await startChorusFixture({ CHORUS_LOG_LEVEL: 'warn' }, {}, undefined, logs);
    client = ClientProxyFactory.create({ transport: Transport.NATS, options: { servers: [f.nats.url] } });
    await client.connect();
  });
  afterAll(async () => {
    await client?.close();
    await f?.stop();
  });

  it("ClientProxy - send('chorus.query', {query, tenant_id}) receives the finished workflow", async () => {
    const workflow = await firstValueFrom(client.send<WorkflowView>('chorus.query', { query: 'how does chorus drop duplicates', tenant_id: 'default' }));
    expect(workflow.status).toBe('completed');
    expect(workflow.query).toBe('how does chorus drop duplicates');
    expect(workflow.result?.results.length).toBeGreaterThan(0);
    expect(workflow.steps.map((s) => s.message_type)).toEqual(['query', 'classification_result', 'execution_plan', 'tool_results', 'response']);
  });

  it('ClientProxy - invalid data is rejected with every invalid field', async () => {
    await expect(firstValueFrom(client.send('chorus.query', { query: '', top_k: 0, nonsense: true }))).rejects.toEqual(
      expect.objectContaining({
        status: 'error',
        message: 'invalid query',
        errors: expect.arrayContaining([
          expect.objectContaining({ field: 'query' }),
          expect.objectContaining({ field: 'top_k' }),
          expect.objectContaining({ field: 'nonsense' }),
        ]),
      }),
    );
  });

  it('ClientProxy - a body that is JSON but no packet (null) is answered with an error, not left to time out', async () => {
    const reply = await f.chorus.bus.nc.request('chorus.query', 'null', { timeout: 5000 });
    expect(reply.json()).toEqual({ err: expect.objectContaining({ status: 'error', message: 'data must be an object: {query, tenant_id?, …}' }), isDisposed: true });
  });

  it('ClientProxy - emit (no reply subject) starts nothing and says so in the log, rather than vanishing', async () => {
    await firstValueFrom(client.emit('chorus.query', { query: 'emitted, not sent' }), { defaultValue: undefined });
    const line = await waitFor(() => logs.lines.find((l) => /without a reply subject \(ClientProxy\.emit\?\) was ignored: use send\(\)/.test(String(l.msg))));
    expect(line).toMatchObject({ level: 40, pattern: 'chorus.query' });
  });

  it('raw NATS publisher - a query whose trace context is only in the W3C traceparent header is continued by every hop', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const envelope = createEnvelope({ messageType: 'query', correlationId: 'header-trace-1', tenantId: 'default', agent: 'third-party', deadline: new Date(Date.now() + 10_000), payload: { query: 'how does chorus drop duplicates', top_k: 3, require_all: false } });
    delete (envelope as { traceparent?: string }).traceparent;
    const h = headers();
    h.set('traceparent', `00-${traceId}-00f067aa0ba902b7-01`);
    await f.chorus.bus.js.publish('chorus.wf.default.query.header-trace-1', JSON.stringify(envelope), { headers: h, msgID: 'header-trace-1.query.third-party' });
    const history = await waitFor(async () => {
      const r = await fetch(`${f.url}/v1/workflows/header-trace-1/history`);
      const body = r.status === 200 ? ((await r.json()) as { envelopes: Array<{ agent: string; message_type: string; traceparent?: string }> }) : undefined;
      return body?.envelopes.some((e) => e.message_type === 'response') ? body.envelopes : undefined;
    }, { what: 'the workflow answered' });
    const hops = history.filter((e) => ['intent', 'planner', 'search', 'responder'].includes(e.agent));
    expect(hops.map((e) => e.agent)).toEqual(['intent', 'planner', 'search', 'responder']);
    for (const e of hops) expect(e.traceparent?.split('-')[1]).toBe(traceId);
  });

  it('ClientProxy - a deadline_ms over the deployment\'s cap is one error naming it, over the contract\'s bound too', async () => {
    const refusal = async (deadline_ms: number) => firstValueFrom(client.send('chorus.query', { query: 'x', deadline_ms })).then(() => null, (e: { errors: Array<{ field: string; messages: string[] }> }) => e.errors);
    const max = f.config.workflow.maxDeadlineMs;
    expect(await refusal(max + 1)).toEqual([{ field: 'deadline_ms', messages: [`deadline_ms must not be greater than ${max}`] }]);
    expect(await refusal(999_999_999)).toEqual([{ field: 'deadline_ms', messages: [`deadline_ms must not be greater than ${max}`] }]);
  });
});
