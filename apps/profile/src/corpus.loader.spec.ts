import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadCorpus } from './corpus.loader';

describe('loadCorpus', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'chorus-corpus-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const file = (name: string, content: string | Buffer) => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };

  it('loadCorpus - a JSONL file in UTF-8 is read', () => {
    const path = file('good.jsonl', '{"id":"d1","title":"Café","text":"crème brûlée"}\n');
    expect(loadCorpus(path, dir).documents).toEqual([{ id: 'd1', title: 'Café', text: 'crème brûlée' }]);
  });

  it('loadCorpus - a directory, a file in another encoding or a file of no document is refused, naming CHORUS_CORPUS and the path', () => {
    expect(() => loadCorpus(dir, dir)).toThrow(`CHORUS_CORPUS names a directory (${dir}): give a JSON Lines file`);
    const latin1 = file('latin1.jsonl', Buffer.from('{"id":"d1","text":"caf\xe9"}\n', 'latin1'));
    expect(() => loadCorpus(latin1, dir)).toThrow(`CHORUS_CORPUS ${latin1} is not UTF-8 text`);
    const empty = file('empty.jsonl', '\n\n');
    expect(() => loadCorpus(empty, dir)).toThrow(`CHORUS_CORPUS ${empty} holds no document`);
  });
});
