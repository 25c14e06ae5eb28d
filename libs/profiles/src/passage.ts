import { analyzeEnglish } from './english.analyzer';
import { splitSentences } from './sentence.splitter';

/**
 * The part of a long text worth carrying to whoever quotes it: the run of consecutive sentences,
 * at most `maxChars` long, that matches the most query terms (a query-biased passage, as search
 * engines cut their snippets). A text that fits is returned whole; a text matching no term gives
 * its opening sentences. `terms` are analyzed terms ({@link analyzeEnglish} of the query).
 */
export function bestPassage(text: string, terms: ReadonlySet<string>, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const sentences = splitSentences(text);
  if (sentences.length === 0) return cut(text, maxChars);
  const matches = sentences.map((s) => (terms.size === 0 ? 0 : countMatches(s, terms)));
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
  if (best === null) {
    // Every sentence is longer than the budget: the best one, cut.
    const top = matches.indexOf(Math.max(...matches));
    return cut(sentences[top], maxChars);
  }
  return sentences.slice(best.start, best.end).join(' ');
}

function countMatches(sentence: string, terms: ReadonlySet<string>): number {
  const seen = new Set<string>();
  for (const term of analyzeEnglish(sentence)) if (terms.has(term)) seen.add(term);
  return seen.size;
}

function cut(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const slice = text.slice(0, maxChars - 1);
  const space = slice.lastIndexOf(' ');
  return `${(space > maxChars / 2 ? slice.slice(0, space) : slice).trimEnd()}…`;
}
