import { analyzeEnglish } from './english.analyzer';
import { splitSentences } from './sentence.splitter';

/**
 * The part of a long text worth carrying to whoever quotes it: the run of consecutive sentences,
 * at most `maxChars` long, that matches the most query terms (a query-biased passage, as search
 * engines cut their snippets), or, when one sentence longer than that matches more, its part from
 * just before its first match (marked with …). A text that fits is returned whole; a text matching
 * no term gives its opening sentences. `terms` are analyzed terms ({@link analyzeEnglish} of the query).
 */
export function bestPassage(text: string, terms: ReadonlySet<string>, maxChars: number, index?: SentenceIndex): string {
  if (text.length <= maxChars) return text;
  const { sentences, terms: sentenceTerms } = index ?? indexSentences(text);
  if (sentences.length === 0) return cut(text, maxChars);
  const matches = sentenceTerms.map((own) => countMatches(own, terms));
  // Sliding window over sentences joined by one space: the highest total; on a tie the earliest,
  // grown by the sentences that follow it while they fit.
  let best: { score: number; start: number; end: number } | null = null;
  let start = 0;
  let length = -1;
  let score = 0;
  for (let end = 0; end < sentences.length; end++) {
    length += sentences[end].length + 1;
    score += matches[end];
    while (length > maxChars && start < end) {
      length -= sentences[start].length + 1;
      score -= matches[start];
      start++;
    }
    if (length > maxChars) continue;
    if (best === null || score > best.score || (score === best.score && start === best.start)) best = { score, start, end: end + 1 };
  }
  // A sentence longer than the budget is in no window: when it matches more terms than every window
  // that fits (or none fits), the part of it around its first match is the passage.
  let top = 0;
  for (let i = 1; i < matches.length; i++) if (matches[i] > matches[top]) top = i;
  if (best === null || matches[top] > best.score) {
    const excerpt = excerptAround(sentences[top], terms, maxChars);
    if (best === null || countMatches(new Set(analyzeEnglish(excerpt)), terms) > best.score) return excerpt;
  }
  return sentences.slice(best.start, best.end).join(' ');
}

/**
 * At most `maxChars` of one long sentence: its words from just before the first that matches a
 * term, marked with … where the sentence goes on; from its start when that fits or nothing matches.
 */
function excerptAround(sentence: string, terms: ReadonlySet<string>, maxChars: number): string {
  const words = sentence.split(' ');
  const first = words.findIndex((w) => analyzeEnglish(w).some((t) => terms.has(t)));
  const start = Math.max(0, first - 2);
  const matchEnd = first < 0 ? 0 : words.slice(0, first + 1).join(' ').length;
  if (first < 0 || start === 0 || matchEnd < maxChars - 1) return cut(sentence, maxChars);
  const rest = words.slice(start).join(' ');
  return `…${cut(rest, maxChars - 1)}`;
}

/** A text's sentences and the distinct analyzed terms of each: what {@link bestPassage} scores. */
export interface SentenceIndex {
  sentences: readonly string[];
  terms: ReadonlyArray<ReadonlySet<string>>;
}

/**
 * How much of a text a passage is looked for in: its first 100,000 characters (about 15,000 words).
 * Analyzing a book-length text whole took seconds (4 s for a 12 MB document), in the request of the
 * first query to cut it, and blocked the process meanwhile (in `npm start`, the hub's lease lapsed).
 * A corpus of long documents is better split into sections (a passage then comes from each).
 */
export const PASSAGE_SCAN_CHARS = 100_000;

/** Worth keeping for a document that is cut often: the analysis is most of a passage's cost. */
export function indexSentences(text: string): SentenceIndex {
  const sentences = splitSentences(text.length > PASSAGE_SCAN_CHARS ? text.slice(0, PASSAGE_SCAN_CHARS) : text);
  return { sentences, terms: sentences.map((s) => new Set(analyzeEnglish(s))) };
}

function countMatches(own: ReadonlySet<string>, terms: ReadonlySet<string>): number {
  let n = 0;
  for (const term of terms) if (own.has(term)) n++;
  return n;
}

function cut(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const slice = text.slice(0, maxChars - 1);
  const space = slice.lastIndexOf(' ');
  return `${(space > maxChars / 2 ? slice.slice(0, space) : slice).trimEnd()}…`;
}
