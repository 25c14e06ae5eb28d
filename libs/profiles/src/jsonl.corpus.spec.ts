import { CorpusError } from './corpus.errors';
import { parseJsonlCorpus } from './jsonl.corpus';

/** The CorpusError thrown by parsing `text`, or a failure if nothing was thrown. */
function corpusErrorOf(text: string): CorpusError {
  try {
    parseJsonlCorpus(text, 'corpus.jsonl');
  } catch (error) {
    expect(error).toBeInstanceOf(CorpusError);
    return error as CorpusError;
  }
  throw new Error('expected parseJsonlCorpus to throw');
}

const good = '{"id":"d1","title":"One","text":"first"}';

describe('parseJsonlCorpus', () => {
  it('parseJsonlCorpus - reads records, skipping blank lines and extra fields', () => {
    const text = `${good}\n\n   \r\n{"id":"d2","text":"second","metadata":{"year":2020}}\r\n`;
    expect(parseJsonlCorpus(text, 'corpus.jsonl')).toEqual([
      { id: 'd1', title: 'One', text: 'first' },
      { id: 'd2', title: '', text: 'second' },
    ]);
  });

  it('parseJsonlCorpus - converts a numeric id to a string and a null title to empty', () => {
    expect(parseJsonlCorpus('{"id":42,"title":null,"text":"x"}', 's')).toEqual([{ id: '42', title: '', text: 'x' }]);
  });

  it('parseJsonlCorpus - ignores a byte-order mark and returns nothing for empty input', () => {
    expect(parseJsonlCorpus(`\uFEFF${good}`, 's')).toHaveLength(1);
    expect(parseJsonlCorpus('', 's')).toEqual([]);
  });

  it('parseJsonlCorpus - names source and line of invalid JSON, counting blank lines', () => {
    const error = corpusErrorOf(`${good}\n\n{"id":"d2",`);
    expect(error.code).toBe('INVALID_CORPUS');
    expect(error.source).toBe('corpus.jsonl');
    expect(error.line).toBe(3);
    expect(error.message).toMatch(/^corpus\.jsonl:3: invalid JSON/);
    expect(error.cause).toBeInstanceOf(SyntaxError);
  });

  it('parseJsonlCorpus - rejects a line that is not a JSON object', () => {
    expect(corpusErrorOf(`${good}\n["d2","text"]`).message).toBe('corpus.jsonl:2: expected a JSON object, got an array');
    expect(corpusErrorOf('null').message).toBe('corpus.jsonl:1: expected a JSON object, got null');
    expect(corpusErrorOf('"text"').message).toBe('corpus.jsonl:1: expected a JSON object, got a string');
  });

  it('parseJsonlCorpus - rejects a missing, empty or non-string id', () => {
    expect(corpusErrorOf('{"text":"x"}').message).toBe('corpus.jsonl:1: missing "id" (or BEIR\'s "_id")');
    expect(corpusErrorOf(`${good}\n{"id":" ","text":"x"}`).message).toBe('corpus.jsonl:2: "id" must not be empty');
    expect(corpusErrorOf('{"id":true,"text":"x"}').message).toBe(
      'corpus.jsonl:1: "id" must be a string or a safe integer, got a boolean',
    );
    expect(corpusErrorOf('{"id":{"a":1},"text":"x"}').detail).toBe('"id" must be a string or a safe integer, got an object');
  });

  it("parseJsonlCorpus - reads BEIR's own files, whose id is \"_id\"; an \"id\" and an \"_id\" that differ are refused", () => {
    expect(parseJsonlCorpus('{"_id":"4983","title":"t","text":"x","metadata":{}}', 'corpus.jsonl')).toEqual([{ id: '4983', title: 't', text: 'x' }]);
    expect(parseJsonlCorpus('{"id":"a","_id":"a","text":"x"}', 'corpus.jsonl')[0].id).toBe('a');
    expect(corpusErrorOf('{"id":"a","_id":"b","text":"x"}').detail).toBe('"id" and "_id" differ ("a", "b"): give one');
  });

  it('parseJsonlCorpus - rejects a numeric id that is fractional or beyond 2^53', () => {
    expect(corpusErrorOf('{"id":1.5,"text":"x"}').detail).toBe('"id" must be a string or a safe integer, got a non-integer number');
    expect(corpusErrorOf('{"id":12345678901234567890,"text":"x"}').detail).toBe(
      '"id" must be a string or a safe integer, got an integer beyond 2^53 - 1',
    );
  });

  it('parseJsonlCorpus - rejects a duplicate id and names the first occurrence', () => {
    const error = corpusErrorOf(`${good}\n{"id":"d2","text":"x"}\n{"id":"d1","text":"again"}`);
    expect(error.line).toBe(3);
    expect(error.message).toBe('corpus.jsonl:3: duplicate id "d1" (first on line 1)');
  });

  it('parseJsonlCorpus - with limits, refuses an id or a title longer than a search result carries, naming the line (characters, not UTF-16 units)', () => {
    const limits = { idChars: 8, titleChars: 10 };
    const parse = (text: string) => () => parseJsonlCorpus(text, 'corpus.jsonl', limits);
    expect(parse(`${good}\n{"id":"123456789","text":"x"}`)).toThrow('corpus.jsonl:2: "id" has 9 characters; a search result carries at most 8');
    expect(parse(`{"id":"d1","title":"${'t'.repeat(11)}","text":"x"}`)).toThrow('corpus.jsonl:1: "title" has 11 characters; a search result carries at most 10');
    expect(parse(`{"id":"${'😀'.repeat(8)}","title":"${'😀'.repeat(10)}","text":"x"}`)()).toHaveLength(1);
    // Without limits (engine-direct tools), any length is read.
    expect(parseJsonlCorpus(`{"id":"${'i'.repeat(600)}","text":"x"}`, 'corpus.jsonl')).toHaveLength(1);
  });

  it('parseJsonlCorpus - treats a numeric id and its string as the same id', () => {
    expect(corpusErrorOf('{"id":"7","text":"a"}\n{"id":7,"text":"b"}').detail).toBe('duplicate id "7" (first on line 1)');
  });

  it('parseJsonlCorpus - rejects a non-string title and a missing or non-string text', () => {
    expect(corpusErrorOf('{"id":"d","title":5,"text":"x"}').message).toBe('corpus.jsonl:1: "title" must be a string, got a number');
    expect(corpusErrorOf('{"id":"d","title":"t"}').message).toBe('corpus.jsonl:1: missing "text"');
    expect(corpusErrorOf('{"id":"d","text":["x"]}').message).toBe('corpus.jsonl:1: "text" must be a string, got an array');
  });
});
