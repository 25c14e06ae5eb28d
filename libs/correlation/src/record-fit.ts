import type { WorkflowRecord } from './workflow.record';

const encoder = new TextEncoder();
/** What a text cut to fit the ledger ends with. */
export const CUT_MARK = ' … [cut to fit the ledger; the whole is in the workflow history]';
/** What an answer whose results' snippets were dropped to fit the ledger ends with. */
export const SNIPPETS_CUT = " [the results' snippets were left out to fit the ledger; they are in the workflow history]";

/** `text` cut to its first `chars` characters (code points, so no surrogate pair is split) and marked, or as it is. */
function cut(text: string, chars: number): string;
function cut(text: string | null, chars: number): string | null;
function cut(text: string | null, chars: number): string | null {
  if (text === null || text.length <= chars) return text;
  const points = Array.from(text);
  return points.length <= chars ? text : points.slice(0, chars).join('') + CUT_MARK;
}

/**
 * Ways to make a record smaller, least loss first. Every one keeps what the workflow is (its ids,
 * status, steps, errors and bookkeeping); the texts it drops or cuts are whole in the workflow's
 * envelopes, in the stream (its history).
 */
const SHRINKS: ReadonlyArray<(r: WorkflowRecord) => WorkflowRecord> = [
  // The results' snippets (the answer says so: an empty snippet alone would not).
  (r) => (r.result ? { ...r, result: { ...r.result, answer: r.result.answer + SNIPPETS_CUT, results: r.result.results.map((x) => ({ ...x, snippet: '' })) } } : r),
  // The query and the answer.
  (r) => ({ ...r, query: cut(r.query, 500), result: r.result ? { ...r.result, query: cut(r.result.query, 500), answer: cut(r.result.answer, 1000) } : null }),
  // The error messages.
  (r) => ({ ...r, errors: r.errors.map((e) => ({ ...e, error_message: cut(e.error_message, 300) })) }),
  // The results past the first ten, and the answer's sources.
  (r) => (r.result ? { ...r, result: { ...r.result, results: r.result.results.slice(0, 10), provenance: { ...r.result.provenance, sources: [] } } } : r),
];

/**
 * The record, made to take at most `maxBytes` as JSON (UTF-8), or null when no shrink gets it
 * there. A record larger than one NATS message (the server's `max_payload`) cannot be stored, and
 * a workflow whose record is not stored cannot be read: its texts are cut instead, as little as
 * it takes.
 */
export function fitRecord(record: WorkflowRecord, maxBytes: number): WorkflowRecord | null {
  const size = (r: WorkflowRecord) => encoder.encode(JSON.stringify(r)).length;
  let fitted = record;
  if (size(fitted) <= maxBytes) return fitted;
  for (const shrink of SHRINKS) {
    fitted = shrink(fitted);
    if (size(fitted) <= maxBytes) return fitted;
  }
  return null;
}
