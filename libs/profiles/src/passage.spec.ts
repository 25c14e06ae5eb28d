import fc from 'fast-check';
import { analyzeEnglish } from './english.analyzer';
import { PASSAGE_SCAN_CHARS, bestPassage, indexSentences } from './passage';

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

  it('bestPassage - a passage is looked for in the first PASSAGE_SCAN_CHARS of a very long text only (its analysis is bounded)', () => {
    const filler = 'Nothing to see in this sentence at all. '.repeat(Math.ceil(PASSAGE_SCAN_CHARS / 40));
    const early = `The hub drops duplicates early. ${filler}`;
    expect(bestPassage(early, terms('duplicates'), 60)).toBe('The hub drops duplicates early.');
    const late = `${filler}The hub drops duplicates late.`;
    expect(bestPassage(late, terms('duplicates'), 60)).toBe('Nothing to see in this sentence at all.');
    expect(indexSentences(late.repeat(100)).sentences.join(' ').length).toBeLessThanOrEqual(PASSAGE_SCAN_CHARS);
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

  it('bestPassage - a sentence longer than the budget that matches beats windows that do not: the part around its match', () => {
    const long = `The hub keeps a ledger of every workflow, ${'with its steps, agents and errors, '.repeat(4)}and counts the duplicates it drops by key.`;
    const doc = `Chorus is a message bus. ${long} The responder writes the answer.`;
    const p = bestPassage(doc, terms('how are duplicates counted'), 80);
    expect(p.length).toBeLessThanOrEqual(80);
    expect(p.startsWith('…')).toBe(true);
    expect(p).toContain('counts the duplicates it drops');
    // A window that fits and matches as much is still preferred.
    expect(bestPassage(`${doc} Duplicates are counted.`, terms('how are duplicates counted'), 80)).toBe('The responder writes the answer. Duplicates are counted.');
  });

  it('bestPassage - never longer than the budget, and only words of the text', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('alpha', 'beta', 'gamma.', 'delta', 'Epsilon', 'zeta!', 'eta?'), { maxLength: 200 }), fc.integer({ min: 20, max: 400 }), (words, max) => {
        const t = words.join(' ');
        const p = bestPassage(t, terms('beta zeta'), max);
        expect(p.length).toBeLessThanOrEqual(Math.max(max, 0));
        for (const w of p.replace(/…/g, '').split(/\s+/).filter(Boolean)) expect(t).toContain(w);
      }),
    );
  });
});
