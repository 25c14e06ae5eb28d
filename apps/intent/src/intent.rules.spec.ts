import { MAX_ENTITY_CHARS } from '@chorus/envelope';
import { classifyQuery, extractEntities, withTypoSignals } from './intent.rules';

const classify = (query: string, profiles?: string[]) => classifyQuery({ query, top_k: 10, require_all: false, profiles });

describe('classifyQuery', () => {
  it.each([
    ['what is the correlation hub', 'definition'],
    ['define reciprocal rank fusion', 'definition'],
    ['how do I run the tests', 'how_to'],
    ['bm25 vs trigram', 'comparison'],
    ['difference between cancelled and timed_out', 'comparison'],
    ['the ingress fails with a timeout error', 'troubleshooting'],
    ["npm start doesn't work", 'troubleshooting'],
    ['why are envelopes dead-lettered?', 'question'],
    ['dead letter subject', 'lookup'],
  ])('classifyQuery - "%s" is %s', (query, intent) => {
    expect(classify(query).intent).toBe(intent);
  });

  it('classifyQuery - routes on whole words, not substrings ("which" inside "whichever", "if" inside "diff")', () => {
    expect(classify('whichever diff tool').intent).toBe('lookup');
  });

  it('classifyQuery - modality: keyword, natural language, code, mixed', () => {
    expect(classify('dead letter subject').modality).toBe('keyword');
    expect(classify('how does the hub count duplicates when an agent retries').modality).toBe('natural_language');
    expect(classify('chorus.wf.> max_deliver').modality).toBe('code');
    expect(classify('how do I set max_deliver for the planner').modality).toBe('mixed');
  });

  it('classifyQuery - a parenthesis after a space is prose; one that opens a call is a sign of code', () => {
    expect(classify('Basophils counteract disease development in patients with systemic lupus erythematosus (SLE).').modality).toBe('natural_language');
    expect(classify('PCSK9 inhibitors decrease plasma Lp(a) levels.').modality).toBe('mixed');
    expect(classify('startAgent() throws').modality).toBe('code');
    expect(classify('if x = 1 then').modality).toBe('code');
  });

  it('classifyQuery - complexity grows with length, clauses and comparisons', () => {
    expect(classify('dead letters').complexity).toBe('simple');
    expect(
      classify('compare bm25 and trigram on typos, and explain which one wins on long queries, and why the fusion helps or hurts').complexity,
    ).toBe('complex');
  });

  it('classifyQuery - profile directives become explicit profiles and leave the search text', () => {
    const c = classify('profile:bm25 dead letters profile:trigram', ['wordvec']);
    expect(c.explicit_profiles).toEqual(['wordvec', 'bm25', 'trigram']);
    expect(c.search_text).toBe('dead letters');
    expect(c.signals).toEqual(expect.arrayContaining(['directive:profile:bm25', 'directive:profile:trigram']));
    // Typed in capitals, a directive is still one (it was searched as a word).
    const caps = classify('profile:BM25 dead letters Profile:Trigram', []);
    expect({ profiles: caps.explicit_profiles, text: caps.search_text }).toEqual({ profiles: ['bm25', 'trigram'], text: 'dead letters' });
  });

  it('classifyQuery - a profile named many times is one signal, and the signals stay within the envelope limit (64)', () => {
    const repeated = classify(`${'profile:bm25 '.repeat(63)}ledger`);
    expect(repeated.signals.filter((s) => s.startsWith('directive:'))).toEqual(['directive:profile:bm25']);
    expect(repeated.explicit_profiles).toEqual(['bm25']);
    const many = classify(`${Array.from({ length: 80 }, (_, i) => `profile:p${i}`).join(' ')} ledger`);
    expect(many.signals.length).toBeLessThanOrEqual(64);
  });

  it('classifyQuery - confidence is higher for an unambiguous intent than for a mixed one', () => {
    const clear = classify('what is an envelope').confidence;
    const mixed = classify('how to fix the error when comparing bm25 vs trigram').confidence;
    expect(clear).toBeGreaterThan(mixed);
    expect(clear).toBeLessThanOrEqual(1);
    expect(mixed).toBeGreaterThanOrEqual(0);
  });
});

describe('extractEntities', () => {
  it('extractEntities - leaves out a span longer than an entity may be (a pasted URL, a long quote), which the envelope could not carry', () => {
    const url = `https://example.com/${'a'.repeat(600)}`;
    const quote = `"${'b '.repeat(300)}"`;
    const entities = extractEntities(`why does ${url} fail with ${quote} in NATS`);
    expect(entities.every((e) => e.text.length <= MAX_ENTITY_CHARS)).toBe(true);
    expect(entities.map((e) => e.text)).toContain('NATS');
    expect(classify(`why does ${url} fail`).entities.every((e) => e.text.length <= MAX_ENTITY_CHARS)).toBe(true);
  });

  it('extractEntities - finds quoted text, identifiers, proper nouns, numbers, flags and directives with offsets', () => {
    const text = 'Why does "exactly once" need NATS JetStream and max_deliver=5 with --wait in v2.9.10 profile:bm25';
    const entities = extractEntities(text);
    const kinds = Object.fromEntries(entities.map((e) => [e.text, e.kind]));
    expect(kinds['"exactly once"']).toBe('quoted');
    expect(kinds.NATS).toBe('proper_noun');
    expect(kinds.JetStream).toBe('proper_noun');
    expect(kinds['--wait']).toBe('flag');
    expect(kinds['profile:bm25']).toBe('profile_directive');
    expect(kinds['v2.9.10']).toBe('number');
    for (const e of entities) expect(text.slice(e.start, e.end)).toBe(e.text);
  });
});

describe('withTypoSignals', () => {
  it('withTypoSignals - names each likely typo and its suggestion, or that no vocabulary answered', () => {
    const c = classify('how does the hub drop duplicats');
    expect(withTypoSignals(c, [{ word: 'duplicats', suggestion: 'duplicates', distance: 1 }]).signals).toEqual([...c.signals, 'typo:duplicats:duplicates']);
    expect(withTypoSignals(c, [])).toBe(c);
    expect(withTypoSignals(c, null).signals).toEqual([...c.signals, 'typo-check:unavailable']);
  });

  it('withTypoSignals - keeps the signals within the envelope limit', () => {
    const c = { ...classify('q'), signals: Array.from({ length: 60 }, (_, i) => `s${i}`) };
    const typos = Array.from({ length: 8 }, (_, i) => ({ word: `w${i}`, suggestion: `x${i}`, distance: 1 }));
    expect(withTypoSignals(c, typos).signals).toHaveLength(64);
  });
});
