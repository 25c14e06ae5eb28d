import type { FusedResult } from '@chorus/envelope';
import { NO_MATCHING_SENTENCE, composeAnswer, isProse } from './extractive.answer';

const result = (id: string, text: string, title = id): FusedResult => ({ id, title, text, score: 0.03, ranks: { bm25: 1 } });

describe('composeAnswer', () => {
  it('composeAnswer - quotes the sentences that share the most query terms, cited by result rank', () => {
    const answer = composeAnswer('how are duplicates dropped', [
      result('a', 'Chorus is a message bus. The stream drops duplicates inside its window. Logs are JSON.'),
      result('b', 'The hub counts every duplicate it dropped for a workflow. Nothing else here matters much.'),
    ]);
    expect(answer.answer).toBe('The stream drops duplicates inside its window. [1] The hub counts every duplicate it dropped for a workflow. [2]');
    expect(answer.sources).toEqual([
      { sentence: 'The stream drops duplicates inside its window.', document_id: 'a', result_rank: 1 },
      { sentence: 'The hub counts every duplicate it dropped for a workflow.', document_id: 'b', result_rank: 2 },
    ]);
  });

  it('composeAnswer - gives every result a snippet and keeps its rank, score and per-profile ranks', () => {
    const answer = composeAnswer('duplicates', [result('a', 'Unrelated words first here. The stream drops duplicates inside its window.')]);
    expect(answer.results).toEqual([
      { rank: 1, id: 'a', title: 'a', snippet: 'The stream drops duplicates inside its window.', score: 0.03, ranks: { bm25: 1 } },
    ]);
  });

  it('composeAnswer - never quotes commands or code as the answer', () => {
    const answer = composeAnswer('how does chorus drop duplicates', [
      result('a', "curl -s -XPOST localhost:3000/v1/queries -d '{\"query\":\"how does chorus drop duplicates\"}'. Chorus drops duplicates with idempotency keys."),
    ]);
    expect(answer.answer).toBe('Chorus drops duplicates with idempotency keys. [1]');
  });

  it('composeAnswer - answers each query over the same documents from its own terms (the analysis is remembered, not the answer)', () => {
    const docs = [result('a', 'The stream drops duplicates inside its window. The hub keeps a ledger of every workflow.')];
    expect(composeAnswer('duplicates', docs).answer).toBe('The stream drops duplicates inside its window. [1]');
    expect(composeAnswer('ledger of workflows', docs).answer).toBe('The hub keeps a ledger of every workflow. [1]');
    expect(composeAnswer('duplicates', docs.map((d) => ({ ...d, id: 'b' }))).sources).toEqual([
      { sentence: 'The stream drops duplicates inside its window.', document_id: 'b', result_rank: 1 },
    ]);
  });

  it('composeAnswer - says so when nothing matched', () => {
    expect(composeAnswer('anything', []).answer).toBe('No documents matched the query.');
  });

  it('composeAnswer - results of which no sentence holds a word of the query give no quoted answer, and cite nothing', () => {
    const docs = [result('a', 'Mitochondria are the powerhouse of the cell. They make ATP.')];
    for (const query of ['xylophone zebra', 'the of and']) {
      const answer = composeAnswer(query, docs);
      expect({ answer: answer.answer, sources: answer.sources, listed: answer.results.length }).toEqual({ answer: NO_MATCHING_SENTENCE, sources: [], listed: 1 });
    }
  });
});

describe('isProse', () => {
  it.each([
    ['The hub records each idempotency key once per workflow.', true],
    ['npm ci && npm start', false],
    ['| `query` | the edge | `{query, top_k}` |', false],
    ["curl -s -XPOST localhost:3000/v1/queries -H 'content-type: application/json'", false],
  ])('isProse - %s', (sentence, expected) => {
    expect(isProse(sentence)).toBe(expected);
  });
});
