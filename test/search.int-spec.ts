import { ProfileClient, RemoteError, startProfileService, type Component } from '@chorus/bus';
import { createEnvelope, parseEnvelope, profileSubject, workflowSubject, type ToolResultsPayload, type WorkflowView } from '@chorus/envelope';
import { analyzeEnglish } from '@chorus/profiles';
import { waitFor } from '@chorus/testing';
import { startProfiles } from '../apps/profile/src';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getJson, postJson, startChorusFixture, stopApp, type ChorusFixture } from './chorus.fixture';

describe('search fan-out and profile discovery', () => {
  let f: ChorusFixture;
  let hanging: { stop(): Promise<void> } | undefined;

  beforeAll(async () => {
    f = await startChorusFixture({ CHORUS_PROFILES: 'bm25', CHORUS_PASSAGE_CHARS: '160', CHORUS_PROFILE_HEDGE_MS: '100' });
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
    // The lens it went without is counted, by profile and reason.
    const metrics = await (await fetch(`${f.url}/metrics`)).text();
    expect(Number(/^chorus_search_degraded_total\{profile="stuck",reason="timeout"[^}]*\} (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(1);
    // And each profile's requests, by outcome: the answered lens and the one that ran out of time.
    const requests = (profile: string, outcome: string) =>
      Number(new RegExp(`^chorus_search_profile_request_duration_seconds_count\\{[^}]*profile="${profile}",outcome="${outcome}"[^}]*\\} (\\d+)$`, 'm').exec(metrics)?.[1] ?? 0);
    expect(requests('bm25', 'ok')).toBeGreaterThanOrEqual(1);
    expect(requests('stuck', 'timeout')).toBeGreaterThanOrEqual(1);
    expect(requests('stuck', 'ok')).toBe(0);
  });

  it('search - results whose text no profile gives (its documents endpoint hangs) complete degraded, naming the profile, not as blank results', async () => {
    // Ranks as bm25 does (it asks bm25 over the bus), but never answers for its documents.
    const client = new ProfileClient(f.chorus.bus);
    const mute = await startProfileService(
      f.chorus.bus,
      {
        name: 'mute',
        version: '0.0.1',
        description: 'a profile whose document store hangs',
        metadata: {},
        search: async (r) => ({ ...(await client.search('bm25', r, 2000)), profile: 'mute' }),
        documents: () => new Promise(() => undefined),
      },
      f.log,
    );
    try {
      await waitFor(async () => (await ask({ query: 'what is the hub', profiles: ['mute'], deadline_ms: 3000 })).result?.provenance.profiles_used.includes('mute'), { what: 'search to know the profile' });
      const view = await ask({ query: 'how does the hub count duplicates', profiles: ['mute'], deadline_ms: 3000 });
      expect({ status: view.status, degraded: view.degraded }).toEqual({ status: 'completed', degraded: true });
      expect(view.degradations).toEqual([expect.objectContaining({ profile: 'mute', reason: 'timeout', detail: expect.stringMatching(/results have no text/) })]);
    } finally {
      await mute.stop();
    }
  });

  it('search - a profile replica that hangs beside a live one costs time, not the lens: a request it holds is sent again, and the live one answers', async () => {
    // Two replicas of one profile in the queue group: one ranks as bm25 does, the other never answers
    // (a stopped process that is still connected gets its share of the requests from NATS).
    const client = new ProfileClient(f.chorus.bus);
    const twin = (search: (r: never) => Promise<never>) =>
      startProfileService(f.chorus.bus, { name: 'twin', version: '0.0.1', description: 'two replicas, one hung', metadata: {}, search, documents: (r) => client.documents('bm25', r, 2000) }, f.log);
    const live = await twin(async (r) => ({ ...(await client.search('bm25', r, 2000)), profile: 'twin' }) as never);
    const hung = await twin(() => new Promise(() => undefined));
    try {
      await waitFor(async () => (await ask({ query: 'what is the hub', profiles: ['twin'], deadline_ms: 3000 })).result?.provenance.profiles_used.includes('twin'), { what: 'search to know the profile' });
      const views: WorkflowView[] = [];
      for (let i = 0; i < 10; i++) views.push(await ask({ query: `how does the hub count duplicates ${i}`, profiles: ['bm25', 'twin'], deadline_ms: 3000 }));
      expect(views.map((v) => v.status)).toEqual(Array(10).fill('completed'));
      // Without another try, about half the requests went to the hung replica and lost the lens
      // (at most one in ten would, 1 in 1,000 times: P(more than 1 of 10) at 2^-8 a request).
      expect(views.filter((v) => v.degraded).length).toBeLessThanOrEqual(1);
    } finally {
      await hung.stop();
      await live.stop();
    }
  });

  it('GET /v1/agents - replicas of a profile that search different corpora are a warning (one query would get different answers)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'chorus-other-corpus-'));
    const corpusPath = join(dir, 'other.jsonl');
    writeFileSync(corpusPath, '{"id":"o1","title":"Other","text":"another corpus altogether"}\n');
    const other = await startProfiles(f.chorus.bus, { ...f.config, corpusPath, profiles: ['bm25'] }, f.log);
    try {
      type Profiles = { profiles: Array<{ name: string; instances: number; warnings: string[] }> };
      const bm25 = await waitFor(async () => ((await getJson(`${f.url}/v1/agents`)).body as Profiles).profiles.find((p) => p.name === 'bm25' && p.instances === 2));
      expect(bm25.warnings).toEqual([expect.stringMatching(new RegExp(`^its instances search different corpora, so one query gets different answers: .*${corpusPath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(1 document\\)`))]);
    } finally {
      await other.close();
      rmSync(dir, { recursive: true, force: true });
    }
    const alone = ((await getJson(`${f.url}/v1/agents`)).body as { profiles: Array<{ name: string; warnings: string[] }> }).profiles.find((p) => p.name === 'bm25');
    expect(alone?.warnings).toEqual([]);
  });

  it('search - a plan that reaches the search worker after its search deadline fails the workflow saying so, not blaming the profiles', async () => {
    const deadline = new Date(Date.now() + 5000);
    const request = { query: 'how does the hub count duplicates', top_k: 5, require_all: false };
    const plan = createEnvelope({
      messageType: 'execution_plan',
      correlationId: 'late-plan-1',
      tenantId: 'default',
      agent: 'test-planner',
      deadline,
      payload: {
        request,
        search_text: request.query,
        route: 'DIRECT',
        profiles: [{ name: 'bm25', confidence: 1, reason: 'named' }],
        alternatives: [],
        top_k: 5,
        fusion: { k: 60, rank_window: 100 },
        // As a plan that waited in the stream while the search worker was down.
        search_deadline: new Date(Date.now() - 2000).toISOString(),
        require_all: false,
        explanation: 'a late plan',
      },
    });
    await f.chorus.bus.publish(plan);
    const view = await waitFor(async () => {
      const r = await getJson(`${f.url}/v1/workflows/late-plan-1`);
      return r.status === 200 && r.body.status === 'failed' ? (r.body as WorkflowView) : undefined;
    }, { what: 'the late plan failed' });
    expect(view.errors[0]).toMatchObject({ error_type: 'SEARCH_DEADLINE_PASSED', agent: 'search', error_message: expect.stringMatching(/after its search deadline .*: no time was left to search$/) });
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

  it('profile service - a body its endpoint does not take gets an error reply naming every invalid field; a valid one still answers', async () => {
    const send = async (endpoint: 'search' | 'documents', body: string) => {
      const reply = await f.chorus.bus.nc.request(profileSubject('bm25', endpoint), body, { timeout: 5000 });
      // What @nats-io/services' respondError sets (only libs/bus imports its constants).
      const error = reply.headers?.get('Nats-Service-Error') || null;
      return { error, code: error ? reply.headers?.get('Nats-Service-Error-Code') : null, data: reply.string() };
    };
    const errorsCounted = async () => {
      const stats = JSON.parse((await f.chorus.bus.nc.request('$SRV.STATS.bm25', '', { timeout: 5000 })).string()) as { endpoints: Array<{ num_errors: number }> };
      return stats.endpoints.reduce((n, e) => n + e.num_errors, 0);
    };
    const errorsBefore = await errorsCounted();
    const text = 'text must be a non-empty string of at most 4000 characters';
    const limit = 'limit must be an integer from 1 to 10000';
    expect(await send('search', '{}')).toEqual({ error: `${text}; ${limit}`, code: '400', data: '' });
    expect((await send('search', '{"text":"x","limit":-1}')).error).toBe(limit);
    expect((await send('search', '{"text":"x","limit":"x"}')).error).toBe(limit);
    expect((await send('search', '"x"')).error).toBe('the request must be a JSON object');
    expect((await send('search', 'x')).error).toMatch(/JSON/);
    expect((await send('documents', '{"ids":"d1","lead":-1,"max_chars":0}')).error).toBe(
      'ids must be an array of at most 100 document ids; lead must be an integer of 0 or more; max_chars must be an integer of 1 or more',
    );

    // Each one is counted as an error in the service's $SRV stats.
    expect((await errorsCounted()) - errorsBefore).toBe(6);

    // The search worker's client hears the refusal as the profile's error, as it does any other.
    const client = new ProfileClient(f.chorus.bus);
    const refusal = await client.search('bm25', { text: '', limit: 0 }, 5000).catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(RemoteError);
    expect({ code: (refusal as RemoteError).code, retryable: (refusal as RemoteError).retryable }).toEqual({ code: 'PROFILE_ERROR_400', retryable: false });
    expect((refusal as RemoteError).message).toBe(`${text}; ${limit}`);

    const found = await client.search('bm25', { text: 'reciprocal rank fusion', limit: 3, correlation_id: 'wf-1' }, 5000);
    expect(found.hits.length).toBeGreaterThan(0);
    expect(found.hits.length).toBeLessThanOrEqual(3);
    const ids = found.hits.map((h) => h.id);
    const fetched = await client.documents('bm25', { ids, query: 'reciprocal rank fusion', lead: 1, lead_max_chars: 2000, max_chars: 160 }, 5000);
    expect(fetched.documents.map((d) => d.id)).toEqual(ids);
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
