import type { Envelope, WorkflowView } from '@chorus/envelope';
import { getJson, postJson, startChorusFixture, type ChorusFixture } from './chorus.fixture';

/** Questions about Chorus, answered from its own documentation (the default corpus). */
const GOLDEN_QUERIES = [
  'how does chorus drop duplicates',
  'what is the correlation hub',
  'reciprocal rank fusion k=60',
  'dead letter subject for invalid envelopes',
  'how do I run the tests',
];

const REQUIRED_TYPES = ['query', 'classification_result', 'execution_plan', 'tool_results', 'response'];

describe('golden queries over HTTP, end to end', () => {
  let f: ChorusFixture;

  beforeAll(async () => {
    f = await startChorusFixture();
  });
  afterAll(async () => {
    await f?.stop();
  });

  it.each(GOLDEN_QUERIES)('golden query - "%s" completes with fused results from both profiles and a causal history', async (query) => {
    const res = await postJson(`${f.url}/v1/queries?wait=true`, { query });
    expect(res.status).toBe(200);
    const workflow = res.body as WorkflowView;
    expect(workflow.status).toBe('completed');
    expect(workflow.degraded).toBe(false);
    expect(workflow.query).toBe(query);
    expect(workflow.result?.results.length).toBeGreaterThan(0);
    expect(workflow.result?.provenance.profiles_used.sort()).toEqual(['bm25', 'trigram']);
    // Fused: at least one result carries a rank from each profile.
    expect(workflow.result?.results.some((r) => r.ranks.bm25 !== undefined && r.ranks.trigram !== undefined)).toBe(true);
    expect(workflow.result?.answer.length).toBeGreaterThan(10);
    expect(workflow.agents_involved).toEqual(expect.arrayContaining(['ingress', 'intent', 'planner', 'search', 'responder']));

    const history = await getJson(`${f.url}/v1/workflows/${workflow.correlation_id}/history`);
    expect(history.status).toBe(200);
    const envelopes = history.body.envelopes as Envelope[];
    const types = envelopes.map((e) => e.message_type);
    expect(types).toEqual(expect.arrayContaining(REQUIRED_TYPES));
    for (const e of envelopes) expect(e.correlation_id).toBe(workflow.correlation_id);
    const byId = new Map(envelopes.map((e) => [e.message_id, e]));
    const byType = (t: string) => envelopes.find((e) => e.message_type === t)!;
    expect(byType('query').causation_id).toBeNull();
    expect(byType('classification_result').causation_id).toBe(byType('query').message_id);
    expect(byType('execution_plan').causation_id).toBe(byType('classification_result').message_id);
    expect(byType('tool_results').causation_id).toBe(byType('execution_plan').message_id);
    expect(byType('response').causation_id).toBe(byType('tool_results').message_id);
    for (const e of envelopes) if (e.causation_id) expect(byId.has(e.causation_id)).toBe(true);

    // Exactly one terminal state, announced once.
    const terminal = envelopes.filter((e) => e.message_type === 'status_update' && e.agent === 'hub');
    expect(terminal).toHaveLength(1);
    expect((terminal[0].payload as { workflow_status: string }).workflow_status).toBe('completed');
  });

  it('golden query - GET /v1/workflows/:id returns the finished workflow with its steps', async () => {
    const submitted = await postJson(`${f.url}/v1/queries`, { query: 'what does the planner do' });
    expect(submitted.status).toBe(202);
    expect(submitted.body.status_url).toBe(`/v1/workflows/${submitted.body.correlation_id}`);
    expect(submitted.headers.get('location')).toBe(submitted.body.status_url);
    let view: WorkflowView | undefined;
    for (let i = 0; i < 100; i++) {
      const r = await getJson(`${f.url}${submitted.body.status_url}`);
      if (r.status === 200 && r.body.status === 'completed') {
        view = r.body;
        break;
      }
      await new Promise((res) => setTimeout(res, 50));
    }
    expect(view?.status).toBe('completed');
    expect(view?.steps.map((s) => s.message_type)).toEqual(REQUIRED_TYPES);
    expect(view?.finished_at).not.toBeNull();
  });

  it('golden query - an unknown workflow is 404', async () => {
    const r = await getJson(`${f.url}/v1/workflows/does-not-exist`);
    expect(r.status).toBe(404);
    expect(r.body.message).toMatch(/no workflow/);
  });
});
