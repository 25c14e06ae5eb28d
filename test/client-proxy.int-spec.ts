import { ClientProxyFactory, Transport, type ClientProxy } from '@nestjs/microservices';
import { firstValueFrom } from 'rxjs';
import type { WorkflowView } from '@chorus/envelope';
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

  it('ClientProxy - a deadline_ms over the deployment\'s cap is one error naming it, over the contract\'s bound too', async () => {
    const refusal = async (deadline_ms: number) => firstValueFrom(client.send('chorus.query', { query: 'x', deadline_ms })).then(() => null, (e: { errors: Array<{ field: string; messages: string[] }> }) => e.errors);
    const max = f.config.workflow.maxDeadlineMs;
    expect(await refusal(max + 1)).toEqual([{ field: 'deadline_ms', messages: [`deadline_ms must not be greater than ${max}`] }]);
    expect(await refusal(999_999_999)).toEqual([{ field: 'deadline_ms', messages: [`deadline_ms must not be greater than ${max}`] }]);
  });
});
