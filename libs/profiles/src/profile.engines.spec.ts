import { PROFILE_ENGINES, PROFILE_ENGINE_RESOURCES, isProfileEngineName } from './profile.engines';
import { createWordVectors } from './word-vectors';

const docs = [
  { id: '1', title: 'Reciprocal rank fusion', text: 'combines rankings' },
  { id: '2', title: 'Porter stemmer', text: 'reduces words' },
];

// Two-dimensional toy vectors: "fusion" and "rankings" point one way, "stemmer" and "words" the other.
const wordVectors = createWordVectors(2, [
  ['fusion', [1, 0]],
  ['rankings', [0.9, 0.1]],
  ['reciprocal', [0.8, 0.2]],
  ['porter', [0.1, 0.9]],
  ['stemmer', [0, 1]],
  ['words', [0.2, 0.8]],
]);

describe('PROFILE_ENGINES', () => {
  it('PROFILE_ENGINES - builds an engine whose name is its key', () => {
    expect(Object.keys(PROFILE_ENGINES).sort()).toEqual(['bm25', 'trigram', 'wordvec']);
    for (const [name, create] of Object.entries(PROFILE_ENGINES)) {
      const engine = create(docs, { wordVectors });
      expect(engine.name).toBe(name);
      expect(engine.size).toBe(2);
      expect(engine.search('fusion', 5)[0].id).toBe('1');
    }
  });

  it('PROFILE_ENGINES - is frozen', () => {
    expect(Object.isFrozen(PROFILE_ENGINES)).toBe(true);
    expect(Object.isFrozen(PROFILE_ENGINE_RESOURCES)).toBe(true);
  });

  it('PROFILE_ENGINE_RESOURCES - lists the word vectors for wordvec only', () => {
    expect(PROFILE_ENGINE_RESOURCES).toEqual({ bm25: [], trigram: [], wordvec: ['wordVectors'] });
  });

  it('PROFILE_ENGINES - wordvec refuses to build without word vectors', () => {
    expect(() => PROFILE_ENGINES.wordvec(docs, {})).toThrow(/word vectors are required/);
  });

  it('isProfileEngineName - accepts own keys only', () => {
    expect(isProfileEngineName('bm25')).toBe(true);
    expect(isProfileEngineName('trigram')).toBe(true);
    expect(isProfileEngineName('wordvec')).toBe(true);
    expect(isProfileEngineName('toString')).toBe(false);
    expect(isProfileEngineName('dense')).toBe(false);
  });
});
