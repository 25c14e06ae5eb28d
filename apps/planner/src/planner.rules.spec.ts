import type { ClassificationResultPayload } from '@chorus/envelope';
import { planExecution, type PlannerOptions } from './planner.rules';

const options: PlannerOptions = { profiles: ['bm25', 'trigram'], rrfK: 60, rankWindow: 100, responderReserveMs: 300 };
const now = new Date('2026-11-30T10:00:00.000Z');
const deadline = new Date('2026-11-30T10:00:10.000Z');

function classification(overrides: Partial<ClassificationResultPayload> = {}): ClassificationResultPayload {
  return {
    request: { query: 'how does chorus drop duplicates', top_k: 10, require_all: false },
    search_text: 'how does chorus drop duplicates',
    intent: 'how_to',
    entities: [],
    modality: 'natural_language',
    complexity: 'simple',
    confidence: 0.8,
    explicit_profiles: [],
    signals: [],
    ...overrides,
  };
}

describe('planExecution', () => {
  it('planExecution - DIRECT when the caller names one profile', () => {
    const plan = planExecution(classification({ explicit_profiles: ['bm25'] }), options, deadline, now);
    expect(plan.route).toBe('DIRECT');
    expect(plan.profiles.map((p) => p.name)).toEqual(['bm25']);
    expect(plan.alternatives.map((p) => p.name)).toEqual(['trigram']);
  });

  it('planExecution - PARALLEL when the caller names several profiles', () => {
    const plan = planExecution(classification({ explicit_profiles: ['trigram', 'bm25'] }), options, deadline, now);
    expect(plan.route).toBe('PARALLEL');
    expect(plan.profiles.map((p) => p.name)).toEqual(['trigram', 'bm25']);
    expect(plan.alternatives).toEqual([]);
  });

  it('planExecution - keeps a named, configured profile that does not run, and says so', () => {
    const withWordvec = { ...options, profiles: ['bm25', 'trigram', 'wordvec'] };
    const plan = planExecution(classification({ explicit_profiles: ['wordvec'] }), withWordvec, deadline, now, ['bm25', 'trigram']);
    expect(plan.route).toBe('DIRECT');
    expect(plan.profiles[0]).toEqual(expect.objectContaining({ name: 'wordvec', reason: expect.stringMatching(/no instance is running/) }));
  });

  it('planExecution - uses a named profile that runs but is not configured here', () => {
    const plan = planExecution(classification({ explicit_profiles: ['wordvec'] }), options, deadline, now, ['bm25', 'wordvec']);
    expect(plan.profiles).toEqual([expect.objectContaining({ name: 'wordvec', reason: 'named by the caller' })]);
  });

  it("planExecution - fails, not retryable and as the caller's mistake (not a fault), for a named profile neither configured nor running, naming it and the profiles there are", () => {
    const plan = () => planExecution(classification({ explicit_profiles: ['bm25', 'bm52'] }), options, deadline, now, ['bm25', 'wordvec']);
    expect(plan).toThrow(expect.objectContaining({ code: 'UNKNOWN_PROFILE', retryable: false, requestError: true }));
    expect(plan).toThrow('no profile bm52 in this deployment (not configured, and no instance is running); the profiles are: bm25, trigram, wordvec');
    // Before discovery has looked, names are taken on trust.
    expect(planExecution(classification({ explicit_profiles: ['bm52'] }), options, deadline, now, null).profiles[0].name).toBe('bm52');
  });

  it('planExecution - COMPLEX chooses every profile that reaches the threshold, with confidence and reasons', () => {
    const plan = planExecution(classification(), options, deadline, now);
    expect(plan.route).toBe('COMPLEX');
    expect(plan.profiles.map((p) => p.name)).toEqual(['bm25', 'trigram']);
    for (const p of plan.profiles) {
      expect(p.confidence).toBeGreaterThanOrEqual(0.5);
      expect(p.reason.length).toBeGreaterThan(0);
    }
    expect(plan.explanation).toMatch(/bm25, trigram/);
  });

  it('planExecution - COMPLEX with one profile says it is queried alone, not in parallel', () => {
    const plan = planExecution(classification(), { ...options, profiles: ['bm25'] }, deadline, now);
    expect(plan.route).toBe('COMPLEX');
    expect(plan.explanation).toMatch(/: querying bm25 alone\.$/);
  });

  it('planExecution - COMPLEX trusts trigram more for code identifiers and likely typos', () => {
    const plain = planExecution(classification(), options, deadline, now);
    const code = planExecution(
      classification({ entities: [{ text: 'chorus.wf.>', kind: 'identifier', start: 0, end: 11 }], signals: ['typo:duplicats'] }),
      options,
      deadline,
      now,
    );
    const trigram = (p: typeof plain) => p.profiles.find((x) => x.name === 'trigram')!.confidence;
    expect(trigram(code)).toBeGreaterThan(trigram(plain));
  });

  it('planExecution - COMPLEX explains likely typos the intent found, and leans on trigram for them', () => {
    const clean = planExecution(classification(), options, deadline, now);
    const typo = planExecution(classification({ signals: ['typo:duplicats:duplicates'] }), options, deadline, now);
    const profile = (p: typeof clean, name: string) => p.profiles.find((x) => x.name === name)!;
    expect(typo.profiles.map((p) => p.name)).toEqual(['bm25', 'trigram']);
    expect(profile(typo, 'trigram').confidence).toBeGreaterThan(profile(clean, 'trigram').confidence);
    expect(profile(typo, 'trigram').confidence).toBeGreaterThan(profile(typo, 'bm25').confidence);
    expect(profile(typo, 'trigram').reason).toMatch(/likely typos \(duplicats -> duplicates\)/);
    expect(profile(typo, 'bm25').reason).toMatch(/typos weaken exact terms/);
    expect(typo.explanation).toMatch(/with likely typos \(duplicats -> duplicates\)/);
    expect(clean.explanation).not.toMatch(/typo/);
  });

  it('planExecution - COMPLEX includes a running wordvec for natural language, not for code', () => {
    const running = ['bm25', 'trigram', 'wordvec'];
    const claim = classification({ intent: 'lookup', search_text: 'vitamin D deficiency raises the risk of fractures' });
    const plan = planExecution(claim, options, deadline, now, running);
    expect(plan.profiles.map((p) => p.name)).toEqual(['bm25', 'trigram', 'wordvec']);
    expect(plan.profiles[2]).toEqual(expect.objectContaining({ confidence: 0.6, reason: expect.stringMatching(/semantic similarity/) }));
    const question = planExecution(classification({ intent: 'question' }), options, deadline, now, running);
    expect(question.profiles.find((p) => p.name === 'wordvec')!.confidence).toBe(0.7);
    const keyword = planExecution(classification({ modality: 'keyword', intent: 'lookup' }), options, deadline, now, running);
    expect(keyword.profiles.map((p) => p.name)).toContain('wordvec');
    const mixed = planExecution(classification({ modality: 'mixed' }), options, deadline, now, running);
    expect(mixed.profiles.find((p) => p.name === 'wordvec')!.confidence).toBe(0.5);
    const code = planExecution(classification({ modality: 'code', intent: 'lookup' }), options, deadline, now, running);
    expect(code.profiles.map((p) => p.name)).toEqual(['bm25', 'trigram']);
    expect(code.alternatives).toContainEqual(expect.objectContaining({ name: 'wordvec', confidence: 0.3 }));
    // Configured and called for, but not running: still planned, so the workflow reports the lens it lost.
    const absent = planExecution(claim, { ...options, profiles: ['bm25', 'trigram', 'wordvec'] }, deadline, now, ['bm25', 'trigram']);
    expect(absent.profiles.map((p) => p.name)).toEqual(['bm25', 'trigram', 'wordvec']);
    expect(absent.profiles[2].reason).toMatch(/; no instance is running$/);
  });

  it('planExecution - COMPLEX leaves a weak profile as an alternative', () => {
    const plan = planExecution(classification({ modality: 'code' }), { ...options, profiles: ['bm25', 'trigram', 'wordvec'] }, deadline, now);
    expect(plan.alternatives.map((p) => p.name)).toEqual(['wordvec']);
    expect(plan.alternatives[0].confidence).toBeLessThan(0.5);
  });

  it('planExecution - the search deadline leaves the responder its reserve, never more than a fifth of the time left', () => {
    const plan = planExecution(classification(), options, deadline, now);
    expect(Date.parse(plan.search_deadline)).toBe(deadline.getTime() - 300);
    const tight = planExecution(classification(), options, new Date(now.getTime() + 500), now);
    expect(Date.parse(tight.search_deadline)).toBe(now.getTime() + 400);
  });

  it('planExecution - carries the request, top_k and the fusion parameters', () => {
    const plan = planExecution(classification({ request: { query: 'q', top_k: 150 as never, require_all: true } }), options, deadline, now);
    expect(plan.top_k).toBe(150);
    expect(plan.fusion).toEqual({ k: 60, rank_window: 150 });
    expect(plan.require_all).toBe(true);
  });

  it('planExecution - COMPLEX keeps a configured profile with no instance in the plan, saying so, so the search step reports it missing (degraded, or failed with require_all)', () => {
    const plan = planExecution(classification(), options, deadline, now, ['bm25']);
    expect(plan.profiles.map((p) => p.name)).toEqual(['bm25', 'trigram']);
    expect(plan.profiles[1].reason).toMatch(/; no instance is running$/);
    expect(plan.profiles[0].reason).not.toMatch(/no instance/);
  });

  it('planExecution - COMPLEX uses a profile that started after the planner, though not configured', () => {
    const plan = planExecution(classification(), options, deadline, now, ['bm25', 'trigram', 'extra']);
    expect(plan.profiles.map((p) => p.name)).toEqual(['bm25', 'trigram', 'extra']);
  });

  it('planExecution - with nothing running, plans the configured profiles so the search step reports them missing', () => {
    const plan = planExecution(classification(), options, deadline, now, []);
    expect(plan.profiles.map((p) => p.name)).toEqual(['bm25', 'trigram']);
  });
});
