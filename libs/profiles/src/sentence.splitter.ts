/**
 * Sentence splitting for extractive answers. Rule-based on purpose: answers quote whole
 * sentences, so the rules favour not cutting (`e.g.`, `Dr.`, `2.5`, `v1.2.3`) over catching every
 * boundary; a missed boundary yields a longer quote, a wrong one yields a fragment.
 */

/** Abbreviations that never end a sentence when followed by more text (compared lowercased, no dot). */
const ABBREVIATIONS: ReadonlySet<string> = new Set([
  'e.g', 'i.e', 'cf', 'vs', 'viz', 'approx', 'ca', 'resp', 'al', 'dr', 'mr', 'mrs', 'ms', 'prof', 'st', 'jr',
  'sr', 'inc', 'ltd', 'corp', 'dept', 'est', 'jan', 'feb', 'mar', 'apr', 'jun', 'jul', 'aug', 'sep', 'sept',
  'oct', 'nov', 'dec',
]);
/** Abbreviations that precede a number (`Fig. 2`, `No. 5`) but may also be ordinary last words. */
const NUMBER_ABBREVIATIONS: ReadonlySet<string> = new Set([
  'no', 'nos', 'fig', 'figs', 'eq', 'eqs', 'vol', 'p', 'pp', 'ref', 'refs', 'sec', 'ch', 'art', 'op',
]);

/** Lines that start a block of their own: list items, headings, table rows. */
const BLOCK_START = /^\s*(?:[-*+•]|\d{1,9}[.)]|#{1,6})\s+|^\s*\|/;
const BLOCK_MARKER = /^\s*(?:[-*+•]|\d{1,9}[.)]|#{1,6})\s+/;
/** A run of terminators, closing quotes or brackets, then the whitespace after them. */
const BOUNDARY = /[.?!…]+["'”’)\]]*\s+/g;

/**
 * Sentences of `text`, trimmed, in order. Blank lines and markdown list items, headings and
 * table rows separate blocks (a list item is a sentence even without a full stop; its marker is
 * dropped); within a block, wrapped lines are joined, and a sentence ends at `.`, `?`, `!` or `…`
 * followed by whitespace and a character that is not a lowercase letter, unless the word before
 * a `.` is an abbreviation, an initial (`J.`) or dotted (`e.g.`, `U.S.`).
 */
export function splitSentences(text: string): string[] {
  return toBlocks(text).flatMap(splitBlock);
}

function toBlocks(text: string): string[] {
  const blocks: string[] = [];
  let current: string[] = [];
  const flush = (): void => {
    if (current.length > 0) blocks.push(current.join(' '));
    current = [];
  };
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === '') {
      flush();
      continue;
    }
    if (BLOCK_START.test(line)) {
      flush();
      current.push(line.replace(BLOCK_MARKER, ''));
      continue;
    }
    current.push(line);
  }
  flush();
  return blocks;
}

function splitBlock(block: string): string[] {
  const text = block.replace(/\s+/g, ' ').trim();
  const sentences: string[] = [];
  let start = 0;
  for (const match of text.matchAll(BOUNDARY)) {
    const end = match.index + match[0].length;
    if (end >= text.length) break;
    if (!isSentenceEnd(text, match.index, match[0], text[end])) continue;
    sentences.push(text.slice(start, end).trim());
    start = end;
  }
  const rest = text.slice(start).trim();
  if (rest !== '') sentences.push(rest);
  return sentences.filter((sentence) => /[\p{L}\p{N}]/u.test(sentence));
}

function isSentenceEnd(text: string, at: number, boundary: string, next: string): boolean {
  if (/\p{Ll}/u.test(next)) return false;
  // Only a lone `.` can be an abbreviation's; `?`, `!`, `…` and `...` always end the sentence.
  if (!/^\.[^.?!…]/.test(boundary)) return true;
  const before = text.slice(text.lastIndexOf(' ', at - 1) + 1, at);
  const word = before.replace(/^[^\p{L}\p{N}]+/u, '');
  const lower = word.toLowerCase();
  if (ABBREVIATIONS.has(lower)) return false;
  if (NUMBER_ABBREVIATIONS.has(lower) && /\p{N}/u.test(next)) return false;
  if (/^\p{Lu}$/u.test(word)) return false;
  if (/^(?:\p{L}\.)+\p{L}$/u.test(word)) return false;
  return true;
}
