/**
 * What every engine needs besides its own index: the document ids, a precomputed id order for
 * deterministic tie-breaking, and a bounded top-k selection. Kept apart so both engines rank and
 * break ties in exactly the same way.
 */
import { CorpusError } from './corpus.errors';
import type { Document, SearchHit } from './search-engine.types';

/** Ids by internal document number, plus each document's position in ascending id order. */
export interface DocumentCatalog {
  readonly ids: readonly string[];
  /** `idRank[d]` orders documents by id ascending, so ties compare two integers, not strings. */
  readonly idRank: Int32Array;
}

/** Validates ids (a duplicate would make hits ambiguous) and precomputes the tie-break order. */
export function createDocumentCatalog(docs: readonly Document[], source: string): DocumentCatalog {
  const ids = docs.map((doc) => doc.id);
  const seen = new Set<string>();
  for (const id of ids) {
    if (typeof id !== 'string') throw new CorpusError(source, null, `document id must be a string, got ${typeof id}`);
    if (seen.has(id)) throw new CorpusError(source, null, `duplicate document id ${JSON.stringify(id)}`);
    seen.add(id);
  }
  const order = ids.map((_, d) => d).sort((a, b) => compareIds(ids[a], ids[b]));
  const idRank = new Int32Array(ids.length);
  order.forEach((d, rank) => (idRank[d] = rank));
  return { ids, idRank };
}

/** Code-unit order: locale-independent, so rankings are identical on every machine. */
function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Turns the caller's limit into a count: NaN or <= 0 gives 0, fractions round down. */
export function normalizeLimit(limit: number, size: number): number {
  if (!(limit > 0)) return 0;
  return Math.min(size, Math.floor(limit));
}

/**
 * The best `limit` of `candidates` (document numbers), best first; a bounded heap keeps this
 * O(n log k) so a depth-10 query never sorts the whole corpus. Scores <= 0 are dropped.
 */
export function selectTopHits(
  catalog: DocumentCatalog,
  scores: Float64Array,
  candidates: readonly number[],
  limit: number,
): SearchHit[] {
  const k = normalizeLimit(limit, catalog.ids.length);
  if (k === 0) return [];
  const { idRank } = catalog;
  const better = (a: number, b: number): boolean =>
    scores[a] > scores[b] || (scores[a] === scores[b] && idRank[a] < idRank[b]);

  // Min-heap on "better": the root is the worst document kept so far.
  const heap: number[] = [];
  const siftDown = (start: number): void => {
    let i = start;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let worst = i;
      if (left < heap.length && better(heap[worst], heap[left])) worst = left;
      if (right < heap.length && better(heap[worst], heap[right])) worst = right;
      if (worst === i) return;
      [heap[i], heap[worst]] = [heap[worst], heap[i]];
      i = worst;
    }
  };
  for (const d of candidates) {
    if (!(scores[d] > 0)) continue;
    if (heap.length < k) {
      heap.push(d);
      let i = heap.length - 1;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!better(heap[parent], heap[i])) break;
        [heap[i], heap[parent]] = [heap[parent], heap[i]];
        i = parent;
      }
    } else if (better(d, heap[0])) {
      heap[0] = d;
      siftDown(0);
    }
  }
  heap.sort((a, b) => (better(a, b) ? -1 : 1));
  return heap.map((d) => ({ id: catalog.ids[d], score: scores[d] }));
}

/** Title and text as the one indexed field, as the reference figures were computed. */
export function toIndexedText(doc: Document): string {
  return `${doc.title} ${doc.text}`;
}
