import { Bus } from '@chorus/bus';
import { busOptionsFor } from '@chorus/config';
import { waitFor } from '@chorus/testing';
import { startResponder } from '../apps/responder/src';
import { getJson, postJson, startChorusFixture, stopApp, type ChorusFixture } from './chorus.fixture';

/**
 * An agent that was down while a workflow waiting for it was cancelled learns of the end from the
 * stream when it comes back: it publishes nothing for that workflow. (One that was up saw the
 * hub's announcement as it happened.)
 */
describe('an agent restarted after a cancel', () => {
  let f: ChorusFixture;
  let restarted: Bus | undefined;

  beforeAll(async () => {
    f = await startChorusFixture();
  });
  afterAll(async () => {
    await restarted?.close();
    await f?.stop();
  });

  it('cancel - a responder started after the cancel does not answer the cancelled workflow, and answers new ones', async () => {
    await stopApp(f, 'responder');
    const submitted = await postJson(`${f.url}/v1/queries`, { query: 'what does the hub record', deadline_ms: 60_000 });
    const id = submitted.body.correlation_id as string;
    await waitFor(async () => (await getJson(`${f.url}/v1/workflows/${id}`)).body.steps?.length === 4, { what: 'the workflow waiting for its response' });
    expect((await postJson(`${f.url}/v1/workflows/${id}/cancel`, {})).status).toBe(202);
    await waitFor(async () => (await getJson(`${f.url}/v1/workflows/${id}`)).body.status === 'cancelled', { what: 'the cancel' });

    // A new process, as far as the bus can tell: its own connection, which never saw the announcement.
    restarted = await Bus.connect(busOptionsFor(f.config, 'responder'), f.log, { trackFinished: true });
    f.chorus.components.push(await startResponder(restarted, f.config, f.log));
    const after = await postJson(`${f.url}/v1/queries?wait=true`, { query: 'how does chorus drop duplicates' });
    expect(after.body.status).toBe('completed');
    await waitFor(async () => {
      const info = await f.chorus.bus.jsm.consumers.info(f.config.bus.workflowStream, 'responder_tool_results');
      return info.num_pending === 0 && info.num_ack_pending === 0;
    }, { what: 'the responder to work through its backlog' });
    const history = (await getJson(`${f.url}/v1/workflows/${id}/history`)).body.envelopes as Array<{ message_type: string }>;
    expect(history.filter((e) => e.message_type === 'response')).toEqual([]);
    const view = (await getJson(`${f.url}/v1/workflows/${id}`)).body;
    expect({ status: view.status, late: view.late_envelopes ?? 0 }).toEqual({ status: 'cancelled', late: 0 });
  });
});
