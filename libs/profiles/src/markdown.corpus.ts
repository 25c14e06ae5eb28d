/**
 * Markdown files as corpora: one document per ATX section, so a hit points at the section that
 * answers, not at a whole README. Ids are `source#slug`, stable across edits elsewhere in the file.
 */
import { stripInlineMarkdown, stripMarkdownLines, type MarkdownLine } from './markdown.stripper';
import type { Document } from './search-engine.types';

const ATX_HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})(.*)$/;

interface RawSection {
  /** Heading text without markup, or null for the text before the first heading. */
  readonly heading: string | null;
  readonly lines: MarkdownLine[];
}

/**
 * Splits `markdown` at ATX headings (`#` .. `######`) outside fenced code. Each section with a
 * non-empty body becomes `{ id: source#slug, title: heading, text: body }`; the text before the
 * first heading is titled with the file's first heading (or `source`) and slugged `top`. Slugs are
 * unique within the file (`-2`, `-3`, ...). A leading YAML front-matter block is dropped.
 */
export function splitMarkdownSections(markdown: string, source: string): Document[] {
  const sections = toRawSections(dropFrontMatter(markdown.replace(/^\uFEFF/, '').split(/\r?\n/)));
  const slugs = assignSlugs(sections);
  const firstHeading = sections.find((s) => s.heading !== null)?.heading;
  const documents: Document[] = [];
  sections.forEach((section, i) => {
    const text = stripMarkdownLines(section.lines);
    if (text === '') return;
    const title = section.heading ?? (firstHeading || source);
    documents.push({ id: `${source}#${slugs[i]}`, title, text });
  });
  return documents;
}

function toRawSections(lines: readonly string[]): RawSection[] {
  const sections: RawSection[] = [{ heading: null, lines: [] }];
  let fence: { char: string; length: number } | null = null;
  for (const line of lines) {
    const current = sections[sections.length - 1];
    if (fence !== null) {
      // A closing fence uses the opening character, at least as many times, and nothing else.
      const close = /^ {0,3}(`{3,}|~{3,})[ \t]*$/.exec(line);
      if (close !== null && close[1][0] === fence.char && close[1].length >= fence.length) fence = null;
      else current.lines.push({ text: line, code: true });
      continue;
    }
    const open = FENCE_OPEN.exec(line);
    // A backtick fence's info string may not contain backticks (that would be inline code).
    if (open !== null && !(open[1][0] === '`' && open[2].includes('`'))) {
      fence = { char: open[1][0], length: open[1].length };
      continue;
    }
    const heading = ATX_HEADING.exec(line);
    if (heading !== null) {
      sections.push({ heading: stripInlineMarkdown(heading[2] ?? '').trim(), lines: [] });
      continue;
    }
    current.lines.push({ text: line, code: false });
  }
  return sections;
}

/** Headings get their slugs first, so a preamble never shifts a heading's anchor. */
function assignSlugs(sections: readonly RawSection[]): string[] {
  const used = new Set<string>();
  const unique = (base: string): string => {
    let slug = base;
    for (let n = 2; used.has(slug); n++) slug = `${base}-${n}`;
    used.add(slug);
    return slug;
  };
  const slugs = sections.map((s) => (s.heading === null ? '' : unique(slugify(s.heading))));
  return slugs.map((slug, i) => (sections[i].heading === null ? unique('top') : slug));
}

/**
 * GitHub-like anchor: lowercase, punctuation dropped, each space to a hyphen (`A & B` -> `a--b`,
 * as GitHub does); `section` if nothing is left.
 */
export function slugify(heading: string): string {
  const slug = heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .trim()
    .replace(/\s/g, '-');
  return slug === '' ? 'section' : slug;
}

/** YAML front matter (`---` ... `---` or `...` at the very top) is metadata, not prose. */
function dropFrontMatter(lines: readonly string[]): readonly string[] {
  if (lines[0]?.trim() !== '---') return lines;
  const end = lines.findIndex((line, i) => i > 0 && (line.trim() === '---' || line.trim() === '...'));
  return end < 0 ? lines : lines.slice(end + 1);
}
