import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
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
    return { source: corpusPath, documents: parseJsonlCorpus(readFileSync(corpusPath, 'utf8'), corpusPath) };
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
