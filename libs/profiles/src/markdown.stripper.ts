/**
 * Light removal of markdown markup from prose, so that `**BM25**`, `[link](url)` or table rules
 * do not leak markup characters or URLs into indexed text and extractive answers. Deliberately
 * not a full CommonMark parser: fenced code and inline code keep their text verbatim (code is
 * what people search docs for), and list markers stay so sentences can tell items apart.
 */

/** One line of a section body; `code` lines come from a fenced block and are kept verbatim. */
export interface MarkdownLine {
  readonly text: string;
  readonly code: boolean;
}

const BLOCKQUOTE = /^ {0,3}(?:> ?)+/;
const THEMATIC_BREAK = /^ {0,3}([-*_])(?: *\1){2,} *$/;
const SETEXT_UNDERLINE = /^ {0,3}=+ *$/;
const TABLE_RULE = /^ *\|? *:?-+:? *(?:\| *:?-+:? *)*\|? *$/;
const TABLE_ROW_EDGES = /^ *\| *| *\| *$/g;
const LINK_DEFINITION = /^ {0,3}\[[^\]]+\]: *\S+.*$/;
const BULLET = /^(\s*)[*+](?=\s)/;
const TASK_BOX = /^(\s*(?:-|\d{1,9}[.)])\s+)\[[ xX]\]\s+/;
const CODE_SPAN = /(`+)([\s\S]*?[^`])\1(?!`)/g;

/** Markup-free body text: blank-line runs collapsed to one, trailing spaces and HTML comments dropped. */
export function stripMarkdownLines(lines: readonly MarkdownLine[]): string {
  const out: string[] = [];
  let inComment = false;
  for (const line of lines) {
    if (line.code) {
      out.push(line.text.trimEnd());
      continue;
    }
    let text = line.text;
    // HTML comments may span lines; drop everything between the markers.
    if (inComment) {
      const end = text.indexOf('-->');
      if (end < 0) continue;
      text = text.slice(end + 3).trimStart();
      inComment = false;
    }
    text = text.replace(/<!--[\s\S]*?-->/g, '');
    const open = text.indexOf('<!--');
    if (open >= 0) {
      text = text.slice(0, open);
      inComment = true;
    }
    const stripped = stripProseLine(text);
    if (stripped !== null) out.push(stripped);
  }
  return out
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** One prose line without block markup; null when the line is markup only (rules, definitions). */
function stripProseLine(line: string): string | null {
  const isTableRule = TABLE_RULE.test(line) && line.includes('|');
  const isRule = isTableRule || THEMATIC_BREAK.test(line) || SETEXT_UNDERLINE.test(line);
  if (isRule || LINK_DEFINITION.test(line)) return null;
  let text = line.replace(BLOCKQUOTE, '').replace(BULLET, '$1-').replace(TASK_BOX, '$1');
  // A table row keeps its cells, without the outer pipes.
  if (text.trimStart().startsWith('|')) text = text.replace(TABLE_ROW_EDGES, '');
  return stripInlineMarkdown(text).trimEnd();
}

/** Inline markup removed, code spans kept as their literal content. Also used for heading titles. */
export function stripInlineMarkdown(text: string): string {
  let result = '';
  let last = 0;
  for (const match of text.matchAll(CODE_SPAN)) {
    result += stripInlineProse(text.slice(last, match.index)) + match[2].replace(/^ (.*) $/, '$1');
    last = match.index + match[0].length;
  }
  return result + stripInlineProse(text.slice(last));
}

function stripInlineProse(text: string): string {
  return text
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]+)\]\[[^\]]*\]/g, '$1')
    .replace(/<((?:https?|mailto):[^>\s]+)>/g, '$1')
    .replace(/<\/?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?\/?>/g, '')
    .replace(/\*\*(?=\S)(.*?\S)\*\*/g, '$1')
    .replace(/(?<![\p{L}\p{N}_])__(?=\S)(.*?\S)__(?![\p{L}\p{N}_])/gu, '$1')
    .replace(/~~(?=\S)(.*?\S)~~/g, '$1')
    // Single `*`/`_` only at word edges, so `snake_case` and `a * b` survive.
    .replace(/(?<![\p{L}\p{N}*\\])\*(?=\S)([^*]*?\S)\*(?![\p{L}\p{N}*])/gu, '$1')
    .replace(/(?<![\p{L}\p{N}_\\])_(?=\S)([^_]*?\S)_(?![\p{L}\p{N}_])/gu, '$1')
    .replace(/\\([!-/:-@[-`{-~])/g, '$1');
}
