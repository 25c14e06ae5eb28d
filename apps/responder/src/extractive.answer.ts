import { analyzeEnglish, splitSentences } from '@chorus/profiles';
import type { AnswerSource, FusedResult, RankedResult } from '@chorus/envelope';

export interface AnswerOptions {
  /** Documents the answer may quote from. */
  maxDocuments: number;
  /** Sentences in the answer. */
  maxSentences: number;
  snippetChars: number;
}

export function defaultAnswerOptions(): AnswerOptions {
  return { maxDocuments: 3, maxSentences: 2, snippetChars: 300 };
}

export interface Answer {
  answer: string;
  results: RankedResult[];
  sources: AnswerSource[];
}

interface ScoredSentence {
  sentence: string;
  rank: number;
  documentId: string;
  score: number;
  position: number;
}

/** The answer when results were found but none of their sentences holds a word of the query. */
export const NO_MATCHING_SENTENCE = 'No sentence of the results holds a word of the query; the closest results are listed.';

/**
 * A short extractive answer: the sentences of the top documents that share the most query terms
 * (weighted towards better-ranked documents), each cited `[n]` by its result's rank. Every result
 * gets the best-matching passage of its document as its snippet.
 */
export function composeAnswer(query: string, fused: readonly FusedResult[], options = defaultAnswerOptions()): Answer {
  const terms = new Set(analyzeEnglish(query));
  const perDocument = fused.map((result, i) => scoreSentences(result, i + 1, terms));
  const results: RankedResult[] = fused.map((r, i) => ({
    rank: i + 1,
    id: r.id,
    title: r.title,
    snippet: snippetOf(perDocument[i], r, options.snippetChars),
    score: r.score,
    ranks: r.ranks,
  }));
  if (fused.length === 0) return { answer: 'No documents matched the query.', results, sources: [] };

  const candidates = perDocument
    .slice(0, options.maxDocuments)
    .flat()
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score || a.rank - b.rank || a.position - b.position);
  // Best sentence of each document first (an answer drawn from several sources), then the next best.
  const chosen: ScoredSentence[] = [];
  for (const c of candidates) {
    if (chosen.length < options.maxSentences && !chosen.some((s) => s.documentId === c.documentId)) chosen.push(c);
  }
  for (const c of candidates) {
    if (chosen.length < options.maxSentences && !chosen.includes(c)) chosen.push(c);
  }
  // No sentence shares a word with the query (results found by spelling or by meaning, a query of
  // stopwords): quoting the first sentence would answer a question nobody asked, citing it.
  if (chosen.length === 0) return { answer: NO_MATCHING_SENTENCE, results, sources: [] };
  chosen.sort((a, b) => a.rank - b.rank || a.position - b.position);
  const answer = chosen.map((s) => `${s.sentence} [${s.rank}]`).join(' ');
  return {
    answer,
    results,
    sources: chosen.map((s) => ({ sentence: s.sentence, document_id: s.documentId, result_rank: s.rank })),
  };
}

/**
 * True for a sentence of prose. Documentation mixes prose with commands, tables and code; an answer
 * made of `curl -s -XPOST …` quotes the question back instead of answering it.
 */
export function isProse(sentence: string): boolean {
  const tokens = sentence.split(/\s+/).filter(Boolean);
  if (tokens.length < 4 || /^[|{}[\]$#>`]/.test(sentence.trim()) || /&&|\|\||\$\(|\s\|\s/.test(sentence)) return false;
  const words = tokens.filter((t) => /^[("'“]?[\p{L}][\p{L}'’-]*[)"'”.,;:!?]*$/u.test(t)).length;
  return words / tokens.length >= 0.7;
}

function scoreSentences(result: FusedResult, rank: number, terms: ReadonlySet<string>): ScoredSentence[] {
  return analyzedSentences(result.text).map(({ sentence, distinct, length }, position) => {
    let matched = 0;
    for (const term of terms) if (distinct.has(term)) matched++;
    const coverage = terms.size === 0 ? 0 : matched / terms.size;
    // Coverage of the query, damped by length, and a prior for better-ranked documents.
    const score = coverage === 0 ? 0 : coverage / Math.sqrt(Math.max(8, length) / 8) + 0.1 / rank;
    return { sentence, rank, documentId: result.id, score, position };
  });
}

interface AnalyzedSentence {
  /** Trimmed, as quoted. */
  sentence: string;
  /** Its distinct analyzed terms. */
  distinct: ReadonlySet<string>;
  /** How many analyzed terms it has, duplicates counted. */
  length: number;
}

/**
 * The quotable sentences of recently answered texts, analyzed (bounded, least recently used out).
 * Popular documents answer query after query, and splitting and stemming their sentences was the
 * responder's largest CPU item (docs/benchmarks.md). Keyed by the text itself, so a changed
 * document is analyzed afresh. A text longer than the search's lead and passage sizes reaches the
 * responder as a query-biased excerpt, which differs between queries: those hit only for the same
 * or similar queries. Bounded by entries and by characters (texts may be up to
 * CHORUS_DOCUMENT_CHARS long), about 40 MB at most with the analysis.
 */
const ANALYZED_MAX_ENTRIES = 2000;
const ANALYZED_MAX_CHARS = 8_000_000;
const analyzed = new Map<string, readonly AnalyzedSentence[]>();
let analyzedChars = 0;

function analyzedSentences(text: string): readonly AnalyzedSentence[] {
  let entry = analyzed.get(text);
  if (entry) {
    analyzed.delete(text);
  } else {
    entry = splitSentences(text)
      .filter((s) => s.length >= 20 && s.length <= 600 && isProse(s))
      .map((s) => {
        const terms = analyzeEnglish(s);
        return { sentence: s.trim(), distinct: new Set(terms), length: terms.length };
      });
    analyzedChars += text.length;
  }
  analyzed.set(text, entry);
  while (analyzed.size > 1 && (analyzed.size > ANALYZED_MAX_ENTRIES || analyzedChars > ANALYZED_MAX_CHARS)) {
    const oldest = analyzed.keys().next().value!;
    analyzed.delete(oldest);
    analyzedChars -= oldest.length;
  }
  return entry;
}

function snippetOf(sentences: ScoredSentence[], result: FusedResult, maxChars: number): string {
  const best = [...sentences].sort((a, b) => b.score - a.score || a.position - b.position)[0];
  const text = best?.sentence ?? result.text.trim();
  return text.length <= maxChars ? text : `${text.slice(0, maxChars - 1).trimEnd()}…`;
}
