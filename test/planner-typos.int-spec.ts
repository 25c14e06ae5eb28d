import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requestReply } from '@chorus/bus';
import {
  parseEnvelope,
  workflowSubject,
  type ClassificationResultPayload,
  type ExecutionPlanPayload,
  type MessageType,
  type WorkflowView,
} from '@chorus/envelope';
import { VOCABULARY_SUBJECT, type VocabularyLookupReply } from '@chorus/profiles';
import { waitFor } from '@chorus/testing';
import { postJson, startChorusFixture, stopApp, type ChorusFixture } from './chorus.fixture';

const CORPUS = [
  { id: 'dedup', title: 'Duplicates', text: 'The hub drops duplicates: every envelope carries an idempotency key, and duplicates are counted.' },
  { id: 'deadline', title: 'Deadlines', text: 'Each workflow carries its deadline; the planner reserves time for the responder.' },
  { id: 'fusion', title: 'Fusion', text: 'The search worker fuses the rankings of its profiles with reciprocal rank fusion.' },
].map((d) => JSON.stringify(d)).join('\n');

/** Likely typos, found in the corpus vocabulary the profiles serve, reach the plan through the bus. */
describe('planner: likely typos bring in trigram', () => {
  let f: ChorusFixture;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'chorus-typos-'));
    writeFileSync(join(dir, 'corpus.jsonl'), `${CORPUS}\n`);
    f = await startChorusFixture({ CHORUS_CORPUS: join(dir, 'corpus.jsonl'), CHORUS_PROFILES: 'bm25,trigram' });
    // The profiles serve the vocabulary once their engines are built, just after start.
    await waitFor(() => requestReply<VocabularyLookupReply>(f.chorus.bus, VOCABULARY_SUBJECT, { text: 'x' }, 1000), { what: 'the vocabulary lookup' });
  });
  afterAll(async () => {
    await f?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const ask = async (query: string): Promise<WorkflowView> => (await postJson(`${f.url}/v1/queries?wait=true`, { query, deadline_ms: 5000 })).body;
  const payloadOf = async <T>(view: WorkflowView, type: MessageType): Promise<T> => {
    const stored = await f.chorus.bus.jsm.streams.getMessage(f.chorus.bus.options.workflowStream, {
      last_by_subj: workflowSubject(view.tenant_id, type, view.correlation_id),
    });
    const parsed = parseEnvelope(stored!.data);
    if (!parsed.ok) throw parsed.error;
    return parsed.value.payload as T;
  };

  it('vocabulary lookup - a request without its text, or with too long a one, is refused naming the field; a text is looked up', async () => {
    const ask = (body: unknown) => requestReply<VocabularyLookupReply>(f.chorus.bus, VOCABULARY_SUBJECT, body, 5000).catch((e: { code?: string; fields?: unknown }) => e);
    const refusal = { code: 'BAD_REQUEST', fields: [{ field: 'text', messages: ['text must be a string of at most 4000 characters'] }] };
    expect(await ask({})).toMatchObject(refusal);
    expect(await ask({ text: 5 })).toMatchObject(refusal);
    expect(await ask({ text: 'x'.repeat(4001) })).toMatchObject(refusal);
    expect(await ask({ text: 'how does the hub drop dupliactes' })).toMatchObject({ vocabulary_size: expect.any(Number), typos: expect.any(Array) });
  });

  it('planner - a query with a typo the corpus vocabulary recognises plans trigram, trusted above bm25, and names the typo', async () => {
    const view = await ask('how does the hub drop duplicats');
    expect(view.status).toBe('completed');
    const classification = await payloadOf<ClassificationResultPayload>(view, 'classification_result');
    expect(classification.signals).toContain('typo:duplicats:duplicates');
    const plan = await payloadOf<ExecutionPlanPayload>(view, 'execution_plan');
    expect(plan.route).toBe('COMPLEX');
    const trigram = plan.profiles.find((p) => p.name === 'trigram');
    const bm25 = plan.profiles.find((p) => p.name === 'bm25');
    expect(trigram).toEqual(expect.objectContaining({ reason: expect.stringMatching(/likely typos \(duplicats -> duplicates\)/) }));
    expect(trigram!.confidence).toBeGreaterThan(bm25!.confidence);
    expect(plan.explanation).toMatch(/with likely typos \(duplicats -> duplicates\)/);
    // And the typo-tolerant lens found the document the typo meant.
    expect(view.result?.results[0]?.id).toBe('dedup');
  });

  it('planner - the same query spelled right carries no typo, and trigram keeps its ordinary confidence', async () => {
    const view = await ask('how does the hub drop duplicates');
    expect(view.status).toBe('completed');
    const classification = await payloadOf<ClassificationResultPayload>(view, 'classification_result');
    expect(classification.signals.filter((s) => s.startsWith('typo'))).toEqual([]);
    const plan = await payloadOf<ExecutionPlanPayload>(view, 'execution_plan');
    const trigram = plan.profiles.find((p) => p.name === 'trigram')!;
    expect(trigram.reason).not.toMatch(/typo/);
    expect(trigram.confidence).toBeLessThan(plan.profiles.find((p) => p.name === 'bm25')!.confidence);
  });

  it('intent - with no vocabulary to ask, the query is classified without typo hints, and says so', async () => {
    await stopApp(f, 'profiles');
    const started = Date.now();
    const view = await ask('how does the hub drop duplicats');
    const classification = await payloadOf<ClassificationResultPayload>(view, 'classification_result');
    expect(classification.signals).toContain('typo-check:unavailable');
    expect(classification.signals.filter((s) => s.startsWith('typo:'))).toEqual([]);
    // No profile answers at all, so the workflow ends (without results) well within its deadline.
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
