import { BadRequestError } from './errors';
import { MAX_DOCUMENT_ID_CHARS, MAX_QUERY_CHARS, MAX_RANK_WINDOW, MAX_TOP_K, hasCharsBetween } from './patterns';
import { parseDocumentsRequest, parseSearchRequest } from './profile-request';

/** The fields a parse refused; fails when it accepted the request. */
function refused(parse: () => unknown): string[] {
  try {
    parse();
  } catch (e) {
    if (e instanceof BadRequestError) return e.fields.map((f) => f.field);
    throw e;
  }
  throw new Error('the request was accepted');
}

describe('parseSearchRequest', () => {
  it('parseSearchRequest - takes what the search worker sends, unchanged', () => {
    const request = { text: 'reciprocal rank fusion', limit: 100, correlation_id: 'wf_01-abc' };
    expect(parseSearchRequest(request)).toEqual(request);
    expect(parseSearchRequest({ text: 'x', limit: MAX_RANK_WINDOW, future_field: true })).toEqual({ text: 'x', limit: MAX_RANK_WINDOW });
  });

  it('parseSearchRequest - names every invalid field, with its rule, in one error', () => {
    let error: unknown;
    try {
      parseSearchRequest({});
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as BadRequestError).code).toBe('BAD_REQUEST');
    expect((error as BadRequestError).retryable).toBe(false);
    expect((error as BadRequestError).message).toBe(
      `text must be a non-empty string of at most ${MAX_QUERY_CHARS} characters; limit must be an integer from 1 to ${MAX_RANK_WINDOW}`,
    );
  });

  it('parseSearchRequest - refuses a limit that is not an integer in range, instead of defaulting it', () => {
    for (const limit of [-1, 0, 1.5, MAX_RANK_WINDOW + 1, 'x', '10', null, Number.NaN]) {
      expect(refused(() => parseSearchRequest({ text: 'x', limit }))).toEqual(['limit']);
    }
  });

  it('parseSearchRequest - refuses a text that is empty, too long or not a string, and a bad correlation_id', () => {
    for (const text of ['', 'x'.repeat(MAX_QUERY_CHARS + 1), 42, ['x']]) expect(refused(() => parseSearchRequest({ text, limit: 5 }))).toEqual(['text']);
    expect(parseSearchRequest({ text: 'x'.repeat(MAX_QUERY_CHARS), limit: 5 }).text).toHaveLength(MAX_QUERY_CHARS);
    expect(refused(() => parseSearchRequest({ text: 'x', limit: 5, correlation_id: 'a b' }))).toEqual(['correlation_id']);
  });

  it('parseSearchRequest, parseDocumentsRequest - count characters as the query is counted at the edge: an emoji (two UTF-16 units) is one', () => {
    // A query of 2,001 emoji passed the edge and then failed at every profile.
    expect(parseSearchRequest({ text: '😀'.repeat(MAX_QUERY_CHARS), limit: 5 }).text).toHaveLength(2 * MAX_QUERY_CHARS);
    expect(refused(() => parseSearchRequest({ text: '😀'.repeat(MAX_QUERY_CHARS + 1), limit: 5 }))).toEqual(['text']);
    expect(parseDocumentsRequest({ ids: ['d1'], query: '😀'.repeat(MAX_QUERY_CHARS) }).query).toHaveLength(2 * MAX_QUERY_CHARS);
    expect(hasCharsBetween('a😀', 2, 2)).toBe(true);
    expect(hasCharsBetween('😀😀😀', 1, 2)).toBe(false);
    expect(hasCharsBetween('😀', 2, 5)).toBe(false);
  });

  it('parseSearchRequest - refuses a body that is not a JSON object', () => {
    for (const raw of [null, 'x', 3, [], [{ text: 'x', limit: 5 }]]) expect(refused(() => parseSearchRequest(raw))).toEqual(['$']);
  });
});

describe('parseDocumentsRequest', () => {
  it('parseDocumentsRequest - takes what the search worker sends, unchanged, and ids alone', () => {
    const request = { ids: ['docs/a.md#one', '42'], query: 'how does the hub count duplicates', lead: 1, lead_max_chars: 2000, max_chars: 400 };
    expect(parseDocumentsRequest(request)).toEqual(request);
    expect(parseDocumentsRequest({ ids: [] })).toEqual({ ids: [] });
    expect(parseDocumentsRequest({ ids: ['a'], lead: 0, query: '' })).toEqual({ ids: ['a'], lead: 0, query: '' });
  });

  it('parseDocumentsRequest - names every invalid field in one error', () => {
    expect(refused(() => parseDocumentsRequest({ ids: 'a', query: 7, lead: -1, max_chars: 0, lead_max_chars: '2000' }))).toEqual([
      'ids',
      'query',
      'lead',
      'max_chars',
      'lead_max_chars',
    ]);
    expect(refused(() => parseDocumentsRequest({}))).toEqual(['ids']);
  });

  it('parseDocumentsRequest - bounds the number of ids, their length and the query', () => {
    const tooMany = Array.from({ length: MAX_TOP_K + 1 }, (_, i) => `d${i}`);
    expect(refused(() => parseDocumentsRequest({ ids: tooMany }))).toEqual(['ids']);
    expect(parseDocumentsRequest({ ids: tooMany.slice(1) }).ids).toHaveLength(MAX_TOP_K);
    for (const id of ['', 'x'.repeat(MAX_DOCUMENT_ID_CHARS + 1), 7, null]) expect(refused(() => parseDocumentsRequest({ ids: ['a', id] }))).toEqual(['ids']);
    expect(refused(() => parseDocumentsRequest({ ids: ['a'], query: 'x'.repeat(MAX_QUERY_CHARS + 1) }))).toEqual(['query']);
  });
});
