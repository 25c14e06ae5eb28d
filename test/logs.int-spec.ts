import { LogCapture, duplicateTopLevelKeys, waitFor } from '@chorus/testing';
import { postJson, startChorusFixture, type ChorusFixture } from './chorus.fixture';

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

  it('logs - duplicateTopLevelKeys finds a key written twice at the top level only', () => {
    expect(duplicateTopLevelKeys('{"a":1,"b":{"a":2},"c":"a\\":"}')).toEqual([]);
    expect(duplicateTopLevelKeys('{"a":1,"b":[{"a":2}],"a":3}')).toEqual(['a']);
  });
});
