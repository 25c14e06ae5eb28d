import { slugify, splitMarkdownSections } from './markdown.corpus';

describe('splitMarkdownSections', () => {
  it('splitMarkdownSections - makes one document per heading, with ids from slugs', () => {
    const md = '# Chorus\n\nIntro text.\n\n## Getting started\n\nRun it.\n\n### Config & env\n\nSet vars.\n';
    expect(splitMarkdownSections(md, 'README.md')).toEqual([
      { id: 'README.md#chorus', title: 'Chorus', text: 'Intro text.' },
      { id: 'README.md#getting-started', title: 'Getting started', text: 'Run it.' },
      { id: 'README.md#config--env', title: 'Config & env', text: 'Set vars.' },
    ]);
  });

  it('splitMarkdownSections - titles the preamble with the first heading, or the source without one', () => {
    const withHeading = splitMarkdownSections('Badges and a lead.\n\n# Title\n\nBody.', 'a.md');
    expect(withHeading[0]).toEqual({ id: 'a.md#top', title: 'Title', text: 'Badges and a lead.' });
    expect(withHeading[1].id).toBe('a.md#title');
    expect(splitMarkdownSections('Just prose.', 'notes.md')).toEqual([
      { id: 'notes.md#top', title: 'notes.md', text: 'Just prose.' },
    ]);
  });

  it('splitMarkdownSections - ignores headings inside fenced code and keeps the code text', () => {
    const md = '# Shell\n\n```bash\n# not a heading\nnpm start\n```\n\n~~~\n## still code\n~~~\n\nAfter.';
    const docs = splitMarkdownSections(md, 's.md');
    expect(docs).toHaveLength(1);
    expect(docs[0].text).toBe('# not a heading\nnpm start\n\n## still code\n\nAfter.');
  });

  it('splitMarkdownSections - closes a fence only with the same character and length', () => {
    const md = '# A\n\n````md\n```\n# inside\n````\n# B\n\nb';
    expect(splitMarkdownSections(md, 's.md').map((d) => d.title)).toEqual(['A', 'B']);
  });

  it('splitMarkdownSections - treats an unclosed fence as code to the end of the file', () => {
    expect(splitMarkdownSections('# A\n\n```\n# B\ncode', 's.md').map((d) => d.id)).toEqual(['s.md#a']);
  });

  it('splitMarkdownSections - makes duplicate heading slugs unique with -2, -3', () => {
    const md = '## Usage\n\none\n\n## Usage\n\ntwo\n\n## usage\n\nthree\n\n## Usage 2\n\nfour';
    expect(splitMarkdownSections(md, 'x.md').map((d) => d.id)).toEqual([
      'x.md#usage',
      'x.md#usage-2',
      'x.md#usage-3',
      'x.md#usage-2-2',
    ]);
  });

  it('splitMarkdownSections - skips sections with an empty body but keeps their slug taken', () => {
    const md = '# Top\n\n## Empty\n\n<!-- nothing -->\n\n## Empty\n\nfilled';
    expect(splitMarkdownSections(md, 'x.md')).toEqual([{ id: 'x.md#empty-2', title: 'Empty', text: 'filled' }]);
  });

  it('splitMarkdownSections - accepts closing hashes and requires a space after the opening ones', () => {
    const docs = splitMarkdownSections('## Options ##\n\n#hashtag stays text\n####### seven is text', 'x.md');
    expect(docs).toEqual([{ id: 'x.md#options', title: 'Options', text: '#hashtag stays text\n####### seven is text' }]);
  });

  it('splitMarkdownSections - strips inline markup but keeps code and identifiers', () => {
    const md =
      '# The `bm25` **engine**\n\n' +
      'See [the docs](https://x.io/a_b) and ![diagram](d.png), *really* __bold__ ~~old~~.\n' +
      'Call `parse_jsonl(**kw)` on snake_case_names with <kbd>Ctrl</kbd> at <https://x.io>.\n' +
      '> quoted \\*literal\\*\n\n---\n\n[ref]: https://example.com';
    const [doc] = splitMarkdownSections(md, 'x.md');
    expect(doc.id).toBe('x.md#the-bm25-engine');
    expect(doc.title).toBe('The bm25 engine');
    expect(doc.text).toBe(
      'See the docs and diagram, really bold old.\n' +
        'Call parse_jsonl(**kw) on snake_case_names with Ctrl at https://x.io.\n' +
        'quoted *literal*',
    );
  });

  it('splitMarkdownSections - keeps list markers, drops table rules and front matter', () => {
    const md = '---\ntitle: Doc\n---\n# List\n\n* one\n+ two\n- [x] done\n1. first\n\n| a | b |\n|---|:-:|\n| 1 | 2 |';
    const [doc] = splitMarkdownSections(md, 'x.md');
    expect(doc).toEqual({ id: 'x.md#list', title: 'List', text: '- one\n- two\n- done\n1. first\n\na | b\n1 | 2' });
  });

  it('splitMarkdownSections - drops multi-line HTML comments', () => {
    const [doc] = splitMarkdownSections('# A\n\nkeep <!-- hide\nstill hidden\n--> shown', 'x.md');
    expect(doc.text).toBe('keep\nshown');
  });
});

describe('slugify', () => {
  it('slugify - lowercases, drops punctuation, hyphenates spaces and keeps Unicode letters', () => {
    expect(slugify('Fusion: RRF (k=60)')).toBe('fusion-rrf-k60');
    expect(slugify('Über α-Zellen')).toBe('über-α-zellen');
    expect(slugify('snake_case and-hyphens')).toBe('snake_case-and-hyphens');
  });

  it('slugify - falls back to "section" when nothing is left', () => {
    expect(slugify('!!!')).toBe('section');
    expect(slugify('')).toBe('section');
  });
});
