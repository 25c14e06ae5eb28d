import { createBm25Engine, type Document } from '@chorus/profiles';
import { SentenceCache, toServiceDefinition } from './profile.app';

const documents: Document[] = [
  { id: 'd1', title: 'Fusion', text: 'Reciprocal rank fusion merges the ranked lists of every profile. '.repeat(5) },
  { id: 'd2', title: 'Hub', text: 'The hub counts duplicates it dropped.' },
];
const profile = () =>
  toServiceDefinition('bm25', createBm25Engine(documents), { source: 'test', documents }, new Map(documents.map((d) => [d.id, d])), new SentenceCache(10));

describe('toServiceDefinition', () => {
  it('toServiceDefinition - answers what the search worker sends as before', () => {
    const p = profile();
    expect(p.search({ text: 'rank fusion', limit: 5, correlation_id: 'wf-1' }).hits.map((h) => h.id)).toEqual(['d1']);
    const reply = p.documents({ ids: ['d2', 'nope', 'd1'], query: 'fusion', lead: 1, lead_max_chars: 1000, max_chars: 80 });
    expect(reply.documents.map((d) => d.id)).toEqual(['d2', 'd1']);
    // The lead document whole (within lead_max_chars), the next cut to max_chars.
    expect(reply.documents[0].text).toBe(documents[1].text);
    expect(reply.documents[1].text.length).toBeLessThanOrEqual(80);
  });

});
