import { splitSentences } from './sentence.splitter';

describe('splitSentences', () => {
  it('splitSentences - splits at full stops, question and exclamation marks', () => {
    expect(splitSentences('It works. Does it scale? Yes! It does.')).toEqual([
      'It works.',
      'Does it scale?',
      'Yes!',
      'It does.',
    ]);
  });

  it('splitSentences - does not split after common abbreviations or initials', () => {
    expect(splitSentences('Use a lens, e.g. BM25, i.e. Okapi. Dr. Smith et al. agree. J. R. R. Tolkien wrote it.')).toEqual([
      'Use a lens, e.g. BM25, i.e. Okapi.',
      'Dr. Smith et al. agree.',
      'J. R. R. Tolkien wrote it.',
    ]);
  });

  it('splitSentences - keeps decimals and version numbers inside sentences', () => {
    expect(splitSentences('Recall rose from 0.89 to 2.5 percent. Node v20.19.0 is required.')).toEqual([
      'Recall rose from 0.89 to 2.5 percent.',
      'Node v20.19.0 is required.',
    ]);
  });

  it('splitSentences - ends a sentence at a number but not at Fig. or No. before one', () => {
    expect(splitSentences('See Fig. 2 and No. 5 below. The answer is no. Then stop. It cost 5. 10 others did too.')).toEqual([
      'See Fig. 2 and No. 5 below.',
      'The answer is no.',
      'Then stop.',
      'It cost 5.',
      '10 others did too.',
    ]);
  });

  it('splitSentences - does not split before a lowercase word', () => {
    expect(splitSentences('The p. value was approx. five. Yahoo! is a name.')).toEqual([
      'The p. value was approx. five.',
      'Yahoo! is a name.',
    ]);
  });

  it('splitSentences - keeps closing quotes and brackets with their sentence', () => {
    expect(splitSentences('He said "stop." Then (briefly.) It ended...  Next one')).toEqual([
      'He said "stop."',
      'Then (briefly.)',
      'It ended...',
      'Next one',
    ]);
  });

  it('splitSentences - keeps markdown list items as separate sentences without their markers', () => {
    expect(splitSentences('Steps:\n- install the deps\n- run it. Then wait\n2. check the logs\n* done')).toEqual([
      'Steps:',
      'install the deps',
      'run it.',
      'Then wait',
      'check the logs',
      'done',
    ]);
  });

  it('splitSentences - joins wrapped lines and separates paragraphs', () => {
    expect(splitSentences('A sentence that\nwraps over lines\n\nA new paragraph without a stop')).toEqual([
      'A sentence that wraps over lines',
      'A new paragraph without a stop',
    ]);
  });

  it('splitSentences - returns nothing for blank or punctuation-only text', () => {
    expect(splitSentences('')).toEqual([]);
    expect(splitSentences('  \n\n ')).toEqual([]);
    expect(splitSentences('- \n...')).toEqual([]);
  });
});
