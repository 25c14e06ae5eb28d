/**
 * JSON Lines corpora (`{"id","title","text"}` per line, the BEIR layout, whose own files name the
 * id `_id`: either is read). Parsing is strict and
 * points at the offending line: a corpus with a silently dropped or duplicated record would make
 * evaluation figures and citations quietly wrong.
 */
import { CorpusError } from './corpus.errors';
import type { Document } from './search-engine.types';

/** The longest id and title a document may have, in characters (what a search result may carry). */
export interface CorpusLimits {
  idChars?: number;
  titleChars?: number;
}

/**
 * Parses JSONL text into documents. Blank lines are skipped; extra fields (BEIR's `metadata`)
 * are ignored. `id` may be a string or a safe integer (converted to its decimal string), `title`
 * may be missing or null (→ `''`), `text` must be a string. Throws {@link CorpusError} naming
 * `source:line` on the first bad record, or the first whose id or title is longer than `limits`.
 */
export function parseJsonlCorpus(text: string, source: string, limits: CorpusLimits = {}): Document[] {
  const documents: Document[] = [];
  const firstLineOfId = new Map<string, number>();
  // A UTF-8 byte-order mark would otherwise make the first line invalid JSON.
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  lines.forEach((raw, index) => {
    const line = index + 1;
    if (raw.trim() === '') return;
    let record: unknown;
    try {
      record = JSON.parse(raw);
    } catch (error) {
      throw new CorpusError(source, line, `invalid JSON (${(error as Error).message})`, { cause: error });
    }
    const document = toDocument(record, source, line);
    // A document whose id or title no search result can carry would fail every workflow that ranks it.
    for (const [field, max] of [['id', limits.idChars], ['title', limits.titleChars]] as const) {
      const chars = max === undefined || document[field].length <= max ? 0 : Array.from(document[field]).length;
      if (max !== undefined && chars > max) throw new CorpusError(source, line, `"${field}" has ${chars} characters; a search result carries at most ${max}`);
    }
    const first = firstLineOfId.get(document.id);
    if (first !== undefined) {
      throw new CorpusError(source, line, `duplicate id ${JSON.stringify(document.id)} (first on line ${first})`);
    }
    firstLineOfId.set(document.id, line);
    documents.push(document);
  });
  return documents;
}

function toDocument(record: unknown, source: string, line: number): Document {
  if (typeof record !== 'object' || record === null || Array.isArray(record)) {
    throw new CorpusError(source, line, `expected a JSON object, got ${describe(record)}`);
  }
  const { id, _id, title, text } = record as Record<string, unknown>;
  // BEIR's own corpus files name the id `_id`; either is read, and two that differ are a mistake.
  if (id !== undefined && _id !== undefined && id !== _id) {
    throw new CorpusError(source, line, `"id" and "_id" differ (${JSON.stringify(id)}, ${JSON.stringify(_id)}): give one`);
  }
  return { id: toId(id ?? _id, source, line), title: toTitle(title, source, line), text: toText(text, source, line) };
}

function toId(id: unknown, source: string, line: number): string {
  if (id === undefined) throw new CorpusError(source, line, 'missing "id" (or BEIR\'s "_id")');
  if (typeof id === 'number') {
    if (Number.isSafeInteger(id)) return String(id);
    // Beyond 2^53 JSON.parse has already rounded the number, so its string would be another id.
    const kind = Number.isInteger(id) ? 'an integer beyond 2^53 - 1' : 'a non-integer number';
    throw new CorpusError(source, line, `"id" must be a string or a safe integer, got ${kind}`);
  }
  if (typeof id !== 'string') {
    throw new CorpusError(source, line, `"id" must be a string or a safe integer, got ${describe(id)}`);
  }
  if (id.trim() === '') throw new CorpusError(source, line, '"id" must not be empty');
  return id;
}

function toTitle(title: unknown, source: string, line: number): string {
  if (title === undefined || title === null) return '';
  if (typeof title !== 'string') {
    throw new CorpusError(source, line, `"title" must be a string, got ${describe(title)}`);
  }
  return title;
}

function toText(text: unknown, source: string, line: number): string {
  if (text === undefined) throw new CorpusError(source, line, 'missing "text"');
  if (typeof text !== 'string') throw new CorpusError(source, line, `"text" must be a string, got ${describe(text)}`);
  return text;
}

/** A value's JSON kind for error messages; never the value itself, which may be large or private. */
function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
