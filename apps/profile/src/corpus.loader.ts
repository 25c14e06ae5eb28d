import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { MAX_DOCUMENT_ID_CHARS, MAX_DOCUMENT_TITLE_CHARS } from '@chorus/envelope';
import { parseJsonlCorpus, splitMarkdownSections, type Document } from '@chorus/profiles';

export interface LoadedCorpus {
  /** Where it came from, for logs and `$SRV.INFO`. */
  source: string;
  documents: Document[];
}

/**
 * The corpus profiles search: a JSONL file when configured, else the project's own documentation
 * (README.md and docs/*.md, one document per section), so a fresh `npm start` answers questions
 * about Chorus itself.
 */
export function loadCorpus(corpusPath: string | undefined, root: string): LoadedCorpus {
  if (corpusPath) {
    if (!existsSync(corpusPath)) throw new Error(`corpus file not found: ${corpusPath} (CHORUS_CORPUS)`);
    if (statSync(corpusPath).isDirectory()) throw new Error(`CHORUS_CORPUS names a directory (${corpusPath}): give a JSON Lines file, one {"id","title","text"} per line`);
    let text: string;
    try {
      // Strict: another encoding read as UTF-8 would index replacement characters instead of its words.
      text = new TextDecoder('utf-8', { fatal: true }).decode(readFileSync(corpusPath));
    } catch (e) {
      throw new Error(`CHORUS_CORPUS ${corpusPath} is not UTF-8 text (${(e as Error).message}); convert it to UTF-8`, { cause: e });
    }
    const documents = parseJsonlCorpus(text, corpusPath, { idChars: MAX_DOCUMENT_ID_CHARS, titleChars: MAX_DOCUMENT_TITLE_CHARS });
    // A profile over nothing would answer every query with nothing, looking healthy.
    if (documents.length === 0) throw new Error(`CHORUS_CORPUS ${corpusPath} holds no document`);
    return { source: corpusPath, documents };
  }
  const files = [join(root, 'README.md')];
  const docsDir = join(root, 'docs');
  if (existsSync(docsDir)) {
    for (const f of readdirSync(docsDir).sort()) if (f.endsWith('.md')) files.push(join(docsDir, f));
  }
  const documents = files
    .filter((f) => existsSync(f))
    .flatMap((f) => splitMarkdownSections(readFileSync(f, 'utf8'), relative(root, f)));
  if (documents.length === 0) throw new Error(`no documentation found under ${root} (README.md, docs/*.md); set CHORUS_CORPUS to a JSONL corpus`);
  return { source: `${relative(process.cwd(), root) || '.'}/{README.md,docs/*.md}`, documents };
}
