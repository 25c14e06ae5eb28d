import { ENGLISH_STOPWORDS, analyzeEnglish, tokenizeWords } from './english.analyzer';

describe('analyzeEnglish', () => {
  it('ENGLISH_STOPWORDS - is exactly the 33-word Lucene English list', () => {
    expect(ENGLISH_STOPWORDS.size).toBe(33);
    for (const word of ['a', 'the', 'with', 'will', 'such', 'their']) expect(ENGLISH_STOPWORDS.has(word)).toBe(true);
    // Common words that Lucene's short list deliberately keeps.
    for (const word of ['we', 'from', 'has', 'which']) expect(ENGLISH_STOPWORDS.has(word)).toBe(false);
  });

  it('analyzeEnglish - drops stopwords and keeps other words in text order', () => {
    expect(analyzeEnglish('The fox is in the box with a hat, not a cat')).toEqual(['fox', 'box', 'hat', 'cat']);
  });

  it('analyzeEnglish - strips possessive s with straight and curly apostrophes', () => {
    expect(analyzeEnglish("John's book")).toEqual(['john', 'book']);
    expect(analyzeEnglish('Mary’s lamb')).toEqual(['mari', 'lamb']);
    // Only a trailing 's is possessive: "it's" loses it and becomes the stopword "it".
    expect(analyzeEnglish("it's")).toEqual([]);
  });

  it('analyzeEnglish - applies the Porter stemmer after lowercasing', () => {
    expect(analyzeEnglish('Running CONNECTIONS generalizations')).toEqual(['run', 'connect', 'gener']);
  });

  it('analyzeEnglish - keeps letters and digits of any script as word characters', () => {
    expect(analyzeEnglish('TNF-α and β-cells in Zürich, 東京 2.5mg')).toEqual([
      'tnf', 'α', 'β', 'cell', 'zürich', '東京', '2', '5mg',
    ]);
  });

  it('analyzeEnglish - returns no terms for punctuation or stopwords only', () => {
    expect(analyzeEnglish('')).toEqual([]);
    expect(analyzeEnglish(' -- !!! ')).toEqual([]);
    expect(analyzeEnglish('to be or not to be')).toEqual([]);
  });
});

describe('tokenizeWords', () => {
  it('tokenizeWords - lowercases and splits without removing stopwords or stemming', () => {
    expect(tokenizeWords('The Running-dogs, of Αθήνα!')).toEqual(['the', 'running', 'dogs', 'of', 'αθήνα']);
  });

  it('tokenizeWords - keeps the possessive s as its own word', () => {
    expect(tokenizeWords("John's")).toEqual(['john', 's']);
  });
});
