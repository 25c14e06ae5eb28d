import { createVocabulary, defaultTypoOptions, editDistanceWithin } from './vocabulary';

const vocabulary = createVocabulary([
  { id: 'a', title: 'Duplicates', text: 'The hub drops duplicates and counts every duplicate it drops.' },
  { id: 'b', title: 'Deadlines', text: 'Each workflow carries its deadline; the planner reserves time for the responder.' },
  { id: 'c', title: 'Fusion', text: 'Reciprocal rank fusion of the profiles, with weights. Duplicates again.' },
  { id: 'd', title: 'IL-6', text: 'Interleukin il6 signalling in macrophages.' },
]);

describe('createVocabulary', () => {
  it('createVocabulary - counts the documents that use each word of title and text', () => {
    expect(vocabulary.documentFrequency('duplicates')).toBe(2);
    expect(vocabulary.documentFrequency('hub')).toBe(1);
    expect(vocabulary.documentFrequency('missing')).toBe(0);
    expect(vocabulary.size).toBeGreaterThan(20);
  });

  it('findTypos - a word the corpus lacks, one edit from a corpus word, is a likely typo of it', () => {
    expect(vocabulary.findTypos('how does the hub drop duplicats')).toEqual([{ word: 'duplicats', suggestion: 'duplicates', distance: 1 }]);
    // Swapped adjacent letters are one edit; so are an extra and a missing letter.
    expect(vocabulary.findTypos('the plannre reservess tme').map((t) => [t.word, t.suggestion])).toEqual([
      ['plannre', 'planner'],
      ['reservess', 'reserves'],
    ]);
  });

  it('findTypos - long words may be two edits away, short ones only one', () => {
    expect(vocabulary.findTypos('reciprocel rnak fusoin')).toEqual([
      { word: 'reciprocel', suggestion: 'reciprocal', distance: 1 },
      { word: 'rnak', suggestion: 'rank', distance: 1 },
      { word: 'fusoin', suggestion: 'fusion', distance: 1 },
    ]);
    expect(vocabulary.findTypos('macrofages')).toEqual([{ word: 'macrofages', suggestion: 'macrophages', distance: 2 }]);
    // Seven letters, two edits from "workflow": too short to guess that far.
    expect(vocabulary.findTypos('wrkflw')).toEqual([]);
  });

  it('findTypos - known words, inflections of known words, stopwords, short words, numbers and far words are not typos', () => {
    expect(vocabulary.findTypos('the hub drops duplicates')).toEqual([]);
    // "dropping" is not in the corpus, but its stem is: BM25 matches it, so it is no typo.
    expect(vocabulary.findTypos('dropping deadlined weighted')).toEqual([]);
    expect(vocabulary.findTypos('hb il7 2024 zebrafish')).toEqual([]);
  });

  it('findTypos - names with inner capitals are not typos, nor words that differ from a corpus word only in the first letter', () => {
    // "HUB" and "Drop" are words in capitals; "DUPlicats" and "OmpF"-like names are not judged.
    expect(vocabulary.findTypos('HUB Duplicats')).toEqual([{ word: 'duplicats', suggestion: 'duplicates', distance: 1 }]);
    expect(vocabulary.findTypos('DUPlicats PlannRe')).toEqual([]);
    // One edit from "planner" and "deadline", but in the first letter: more often another word than a slip.
    expect(vocabulary.findTypos('lanner headline')).toEqual([]);
  });

  it('findTypos - reports each word once, in text order, at most maxTypos', () => {
    expect(vocabulary.findTypos('duplicats plannre duplicats').map((t) => t.word)).toEqual(['duplicats', 'plannre']);
    expect(vocabulary.findTypos('duplicats plannre', { maxTypos: 1 })).toHaveLength(1);
    expect(defaultTypoOptions()).toEqual({ minLength: 4, twoEditsFromLength: 8, maxTypos: 8 });
  });

  it('findTypos - prefers the suggestion more documents use', () => {
    const v = createVocabulary([
      { id: '1', title: '', text: 'rank' },
      { id: '2', title: '', text: 'rack' },
      { id: '3', title: '', text: 'rack' },
    ]);
    expect(v.findTypos('ravk')).toEqual([{ word: 'ravk', suggestion: 'rack', distance: 1 }]);
  });
});

describe('editDistanceWithin', () => {
  it.each([
    ['kitten', 'sitting', 3, 3],
    ['kitten', 'sitting', 2, 3],
    ['abcd', 'abdc', 2, 1],
    ['abc', 'abc', 1, 0],
    ['abc', '', 1, 2],
    ['flaw', 'lawn', 2, 2],
  ])('editDistanceWithin - %s vs %s within %i is %i', (a, b, max, expected) => {
    expect(editDistanceWithin(a, b, max)).toBe(expected);
  });
});
