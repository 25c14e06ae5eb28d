import fc from 'fast-check';
import { analyzeEnglish } from './english.analyzer';
import { bestPassage } from './passage';

const terms = (q: string) => new Set(analyzeEnglish(q));

describe('bestPassage', () => {
  const text =
    'Chorus is a message bus. It carries envelopes between agents. ' +
    'The correlation hub drops duplicate envelopes by idempotency key. ' +
    'Search profiles answer in parallel. The responder writes the answer.';

  it('bestPassage - a text that fits is returned whole', () => {
    expect(bestPassage(text, terms('duplicates'), 1000)).toBe(text);
  });

  it('bestPassage - a long text is cut to the sentences that match the query', () => {
    const p = bestPassage(text, terms('how are duplicates dropped'), 80);
    expect(p).toBe('The correlation hub drops duplicate envelopes by idempotency key.');
  });

  it('bestPassage - takes neighbouring sentences while they fit, keeping the best match', () => {
    const p = bestPassage(text, terms('duplicate envelopes'), 130);
    expect(p).toContain('The correlation hub drops duplicate envelopes by idempotency key.');
    expect(p.length).toBeLessThanOrEqual(130);
  });

  it('bestPassage - no matching term gives the opening sentences', () => {
    expect(bestPassage(text, terms('zebra'), 70)).toBe('Chorus is a message bus. It carries envelopes between agents.');
  });

  it('bestPassage - one sentence longer than the budget is cut at a word, marked with …', () => {
    const long = `${'word '.repeat(100)}end.`;
    const p = bestPassage(long, terms('word'), 50);
    expect(p.length).toBeLessThanOrEqual(50);
    expect(p.endsWith('…')).toBe(true);
  });

  it('bestPassage - never longer than the budget, and only words of the text', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('alpha', 'beta', 'gamma.', 'delta', 'Epsilon', 'zeta!', 'eta?'), { maxLength: 200 }), fc.integer({ min: 20, max: 400 }), (words, max) => {
        const t = words.join(' ');
        const p = bestPassage(t, terms('beta zeta'), max);
        expect(p.length).toBeLessThanOrEqual(Math.max(max, 0));
        for (const w of p.replace('…', '').split(/\s+/).filter(Boolean)) expect(t).toContain(w);
      }),
    );
  });
});
