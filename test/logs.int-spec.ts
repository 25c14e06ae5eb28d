import { LogCapture, duplicateTopLevelKeys, waitFor } from '@chorus/testing';
import { getJson, postJson, startChorusFixture, stopApp, type ChorusFixture } from './chorus.fixture';

/** What docs/operations.md says of the logs, on a whole Chorus in one process. */
describe('logs', () => {
  const logs = new LogCapture();
  let f: ChorusFixture;

  beforeAll(async () => {
    f = await startChorusFixture({ CHORUS_LOG_LEVEL: 'debug' }, {}, undefined, logs);
  });
  afterAll(async () => {
    await f?.stop();
  });

  it('logs - at debug every agent logs the envelopes of a workflow under its correlation_id, and no line names a field twice', async () => {
    const done = await postJson(`${f.url}/v1/queries?wait=true`, { query: 'how does the hub drop duplicates' });
    expect(done.body.status).toBe('completed');
    const id = done.body.correlation_id as string;
    const agents = ['ingress', 'intent', 'planner', 'search', 'responder', 'hub'];
    await waitFor(() => agents.every((agent) => logs.lines.some((l) => l.agent === agent && l.correlation_id === id)), { what: 'a line of every agent about the workflow' });
    // A retry too (its lines are about the retried workflow, on the logger of its command's envelope).
    const failed = await postJson(`${f.url}/v1/queries?wait=true`, { query: 'what fails', profiles: ['nosuch'] });
    expect(failed.body.status).toBe('failed');
    expect((await postJson(`${f.url}/v1/workflows/${failed.body.correlation_id}/retry`, {})).status).toBe(202);
    await waitFor(() => logs.lines.some((l) => l.msg === 'workflow retried'), { what: "the hub's line about the retry" });
    const twice = logs.raw.map((line) => ({ line: line.slice(0, 160), keys: duplicateTopLevelKeys(line) })).filter((l) => l.keys.length > 0);
    expect(twice).toEqual([]);
  });

  it('logs - an invalid envelope dead-lettered is logged under the correlation id and tenant of its subject', async () => {
    await f.chorus.bus.js.publish('chorus.wf.default.query.badenv-logs-1', JSON.stringify({ correlation_id: 'badenv-logs-1' }));
    const lines = await waitFor(() => {
      const found = logs.lines.filter((l) => l.msg === 'invalid envelope dead-lettered' && l.subject === 'chorus.wf.default.query.badenv-logs-1');
      return found.length >= 2 ? found : undefined;
    }, { what: 'the dead-letter lines of the hub and intent' });
    for (const l of lines) expect(l).toMatchObject({ correlation_id: 'badenv-logs-1', tenant_id: 'default', level: 40 });
    expect(logs.raw.filter((l) => l.includes('invalid envelope dead-lettered') && duplicateTopLevelKeys(l).length > 0)).toEqual([]);
  });

  it("logs - an A2A request the SDK refuses as A2A has it (a streaming message to an unknown task) is one info line naming the error, without a stack", async () => {
    const message = { kind: 'message', messageId: 'logs-a2a-1', role: 'user', taskId: 'no-such-task-logs', parts: [{ kind: 'text', text: 'x' }] };
    const res = await fetch(`${f.url}/a2a`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/stream', params: { message } }) });
    expect(await res.json()).toEqual({ jsonrpc: '2.0', id: 1, error: { code: -32001, message: 'Task not found: no-such-task-logs' } });
    const line = await waitFor(() => logs.lines.find((l) => l.source === '@a2a-js/sdk' && String(l.msg).includes('no-such-task-logs')), { what: "the SDK's line about the refusal" });
    expect(line).toMatchObject({ level: 30, error_type: 'TaskNotFoundError', msg: expect.stringMatching(/^Pre-stream error for request 1: TaskNotFoundError: Task not found: no-such-task-logs$/) });
  });

  it('logs - a request Chorus cannot serve (503) is logged at warn, an ordinary one at info', async () => {
    await getJson(`${f.url}/v1/workflows?limit=1`);
    await stopApp(f, 'hub');
    expect((await getJson(`${f.url}/v1/workflows?limit=2`)).status).toBe(503);
    const line = (limit: number) => logs.lines.find((l) => (l.req as { url?: string } | undefined)?.url === `/v1/workflows?limit=${limit}`);
    await waitFor(() => line(2), { what: 'the request line of the 503' });
    expect({ ok: line(1)?.level, unavailable: line(2)?.level }).toEqual({ ok: 30, unavailable: 40 });
  });

  it('logs - duplicateTopLevelKeys finds a key written twice at the top level only', () => {
    expect(duplicateTopLevelKeys('{"a":1,"b":{"a":2},"c":"a\\":"}')).toEqual([]);
    expect(duplicateTopLevelKeys('{"a":1,"b":[{"a":2}],"a":3}')).toEqual(['a']);
  });
});
