import { CUT_MARK } from '@chorus/correlation';
import { isTerminalStatus, type WorkflowView } from '@chorus/envelope';
import { getJson, postJson, startChorusFixture, type ChorusFixture } from './chorus.fixture';

/**
 * A NATS server whose `max_payload` is small (16 KiB; the default is 1 MiB): what a message can
 * hold is then less than what the HTTP API accepts.
 */
describe('a NATS server with a small max_payload', () => {
  let f: ChorusFixture;

  beforeAll(async () => {
    f = await startChorusFixture({}, { own: true, extraConfig: 'max_payload: 16384' });
  });
  afterAll(async () => {
    await f?.stop();
  });

  it('small max_payload - a workflow whose record is too large for one message ends in one terminal state that can be read, its query cut to fit', async () => {
    // 3,700 emoji: within the API's 4,000 characters, 14.8 KB of UTF-8.
    const query = `hub ${'😀'.repeat(3700)}`;
    const submitted = await postJson(`${f.url}/v1/queries?wait=true`, { query, deadline_ms: 5000 });
    expect(submitted.status).toBe(200);
    const view = submitted.body as WorkflowView;
    expect(isTerminalStatus(view.status)).toBe(true);
    expect(view.query?.endsWith(CUT_MARK)).toBe(true);
    expect(query.startsWith(view.query!.slice(0, -CUT_MARK.length))).toBe(true);
    const read = await getJson(`${f.url}/v1/workflows/${view.correlation_id}`);
    expect({ status: read.status, workflow: read.body.status }).toEqual({ status: 200, workflow: view.status });
  });
});
