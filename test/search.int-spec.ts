import { startProfileService, type Component } from '@chorus/bus';
import { parseEnvelope, workflowSubject, type ToolResultsPayload, type WorkflowView } from '@chorus/envelope';
import { analyzeEnglish } from '@chorus/profiles';
import { waitFor } from '@chorus/testing';
import { startProfiles } from '../apps/profile/src';
import { postJson, startChorusFixture, stopApp, type ChorusFixture } from './chorus.fixture';

describe('search fan-out and profile discovery', () => {
  let f: ChorusFixture;
  let hanging: { stop(): Promise<void> } | undefined;

  beforeAll(async () => {
    f = await startChorusFixture({ CHORUS_PROFILES: 'bm25', CHORUS_PASSAGE_CHARS: '160' });
    // A profile that accepts requests and never answers: the failure mode a deadline must bound.
    hanging = await startProfileService(
      f.chorus.bus,
      {
        name: 'stuck',
        version: '0.0.1',
        description: 'a profile whose backend hangs',
        metadata: {},
        search: () => new Promise(() => undefined),
        documents: () => new Promise(() => undefined),
      },
      f.log,
    );
  });
  afterAll(async () => {
    await hanging?.stop();
    await f?.stop();
  });

  const ask = async (body: object): Promise<WorkflowView> => (await postJson(`${f.url}/v1/queries?wait=true`, body)).body;

  it('search - a hanging profile costs its lens only: completed, degraded names it, within the deadline', async () => {
    const started = Date.now();
    const view = await ask({ query: 'how does the hub count duplicates', profiles: ['bm25', 'stuck'], deadline_ms: 2000 });
    expect(view.status).toBe('completed');
    expect(view.degraded).toBe(true);
    expect(view.degradations).toEqual([expect.objectContaining({ profile: 'stuck', reason: 'timeout' })]);
    expect(view.result?.provenance.profiles_used).toEqual(['bm25']);
    expect(Date.parse(view.finished_at!)).toBeLessThanOrEqual(Date.parse(view.deadline));
    expect(Date.now() - started).toBeLessThan(2500);
  });

  it('search - require_all turns a hanging profile into a failed workflow naming it', async () => {
    const view = await ask({ query: 'how does the hub count duplicates', profiles: ['bm25', 'stuck'], deadline_ms: 2000, require_all: true });
    expect(view.status).toBe('failed');
    expect(view.errors[0]).toEqual(expect.objectContaining({ agent: 'search', error_type: 'PROFILE_MISSING' }));
    expect(view.errors[0].error_message).toMatch(/stuck \(timeout\)/);
  });

  it('search - naming a profile this deployment does not have fails the workflow at once, naming it and the profiles there are', async () => {
    const started = Date.now();
    const view = await ask({ query: 'reciprocal rank fusion', profiles: ['bm25', 'bm52'], deadline_ms: 10_000 });
    expect({ status: view.status, type: view.errors?.[0]?.error_type }).toEqual({ status: 'failed', type: 'UNKNOWN_PROFILE' });
    expect(view.errors?.[0]?.error_message).toMatch(/no profile bm52 in this deployment .*the profiles are: bm25, stuck/);
    // Not retried until the deadline: a typo is not a profile that is restarting.
    expect(Date.now() - started).toBeLessThan(3000);
    // In the text too.
    expect((await ask({ query: 'profile:bm52 reciprocal rank fusion' })).errors?.[0]?.error_type).toBe('UNKNOWN_PROFILE');
  });

  it('search - the lead results carry their text, the others their passage that best matches the query', async () => {
    const query = 'how does the hub count dropped duplicates';
    const view = await ask({ query, top_k: 10, deadline_ms: 5000 });
    expect(view.status).toBe('completed');
    const stored = await f.chorus.bus.jsm.streams.getMessage(f.chorus.bus.options.workflowStream, {
      last_by_subj: workflowSubject(view.tenant_id, 'tool_results', view.correlation_id),
    });
    const parsed = parseEnvelope(stored!.data);
    if (!parsed.ok) throw parsed.error;
    const results = (parsed.value.payload as ToolResultsPayload).results;
    expect(results.length).toBeGreaterThan(4);
    const terms = new Set(analyzeEnglish(query));
    const lead = results.slice(0, 3);
    const rest = results.slice(3);
    expect(lead.some((r) => r.text.length > 160)).toBe(true);
    for (const r of lead) expect(r.text.length).toBeLessThanOrEqual(2000);
    for (const r of rest) expect(r.text.length).toBeLessThanOrEqual(160);
    // Each passage was chosen for the query: those that were cut contain one of its terms.
    const cut = rest.filter((r) => r.text.length > 100);
    expect(cut.length).toBeGreaterThan(0);
    for (const r of cut) expect(analyzeEnglish(r.text).some((t) => terms.has(t))).toBe(true);
    // And every snippet of the response comes from the text its result carried.
    const words = (t: string) => t.replace(/…$/, '').replace(/\s+/g, ' ');
    for (const [i, r] of view.result!.results.entries()) expect(words(results[i].text)).toContain(words(r.snippet));
  });

  it('search - a profile started after the workers is used on the next query; one that died is no longer waited for', async () => {
    await hanging!.stop();
    hanging = undefined;
    const before = await waitFor(
      async () => {
        const v = await ask({ query: 'reciprocal rank fusion', deadline_ms: 5000 });
        return v.degraded ? undefined : v;
      },
      { what: 'discovery to forget the stopped profile' },
    );
    expect(before.result?.provenance.profiles_used).toEqual(['bm25']);

    const trigram: Component = await startProfiles(f.chorus.bus, f.config, f.log, ['trigram']);
    const after = await ask({ query: 'reciprocal rank fusion', deadline_ms: 5000 });
    expect(after.status).toBe('completed');
    expect(after.degraded).toBe(false);
    expect(after.result?.provenance.profiles_used.sort()).toEqual(['bm25', 'trigram']);

    await trigram.close();
    // Once discovery has noticed, nothing waits for the dead profiles: not degraded, fast.
    const settled = await waitFor(
      async () => {
        const v = await ask({ query: 'reciprocal rank fusion', deadline_ms: 5000 });
        return v.status === 'completed' && !v.degraded ? v : undefined;
      },
      { timeoutMs: 5000, intervalMs: 200, what: 'a plan without the dead profiles' },
    );
    expect(settled.result?.provenance.profiles_used).toEqual(['bm25']);
    const took = Date.parse(settled.finished_at!) - Date.parse(settled.started_at);
    expect(took).toBeLessThan(1000);
  });
});

describe('a configured profile that died', () => {
  let f: ChorusFixture;
  const profiles: Component[] = [];

  beforeAll(async () => {
    f = await startChorusFixture({ CHORUS_PROFILES: 'bm25,trigram' });
    // Each configured profile in a process of its own, as far as the bus can tell: one can die alone.
    await stopApp(f, 'profiles');
    for (const name of ['bm25', 'trigram']) profiles.push(await startProfiles(f.chorus.bus, f.config, f.log, [name]));
  });
  afterAll(async () => {
    await Promise.all(profiles.map((p) => p.close()));
    await f?.stop();
  });

  const ask = async (body: object): Promise<WorkflowView> => (await postJson(`${f.url}/v1/queries?wait=true`, body)).body;

  it('search - is still a lens the workflow lost once discovery has noticed: degraded names it (unavailable) at once, and require_all fails naming it', async () => {
    expect((await ask({ query: 'reciprocal rank fusion' })).result?.provenance.profiles_used.sort()).toEqual(['bm25', 'trigram']);
    await profiles.pop()!.close();
    // Right after, a request may find no responders, or discovery has already forgotten it: either way the same report.
    const settled = await waitFor(
      async () => {
        const v = await ask({ query: 'reciprocal rank fusion', deadline_ms: 5000 });
        const forgotten = v.degradations?.some((d) => d.profile === 'trigram');
        return forgotten && Date.parse(v.finished_at!) - Date.parse(v.started_at) < 1000 ? v : undefined;
      },
      { timeoutMs: 8000, intervalMs: 300, what: 'a fast workflow without trigram' },
    );
    expect({ status: settled.status, degraded: settled.degraded, used: settled.result?.provenance.profiles_used }).toEqual({ status: 'completed', degraded: true, used: ['bm25'] });
    expect(settled.degradations).toEqual([expect.objectContaining({ profile: 'trigram', reason: 'unavailable' })]);
    // Well after discovery's refreshes, still reported, never silently dropped.
    await new Promise((r) => setTimeout(r, 2500));
    const later = await ask({ query: 'reciprocal rank fusion', deadline_ms: 5000 });
    expect({ degraded: later.degraded, missing: later.degradations?.map((d) => d.profile) }).toEqual({ degraded: true, missing: ['trigram'] });
    const strict = await ask({ query: 'reciprocal rank fusion', deadline_ms: 5000, require_all: true });
    expect(strict.status).toBe('failed');
    expect(JSON.stringify(strict.errors)).toMatch(/require_all .*trigram \(unavailable\)/);
  });
});
