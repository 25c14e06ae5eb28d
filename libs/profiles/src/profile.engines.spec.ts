import { PROFILE_ENGINES, isProfileEngineName } from './profile.engines';

const docs = [
  { id: '1', title: 'Reciprocal rank fusion', text: 'combines rankings' },
  { id: '2', title: 'Porter stemmer', text: 'reduces words' },
];

describe('PROFILE_ENGINES', () => {
  it('PROFILE_ENGINES - builds an engine whose name is its key', () => {
    expect(Object.keys(PROFILE_ENGINES).sort()).toEqual(['bm25', 'trigram']);
    for (const [name, create] of Object.entries(PROFILE_ENGINES)) {
      const engine = create(docs);
      expect(engine.name).toBe(name);
      expect(engine.size).toBe(2);
      expect(engine.search('fusion', 5)[0].id).toBe('1');
    }
  });

  it('PROFILE_ENGINES - is frozen', () => {
    expect(Object.isFrozen(PROFILE_ENGINES)).toBe(true);
  });

  it('isProfileEngineName - accepts own keys only', () => {
    expect(isProfileEngineName('bm25')).toBe(true);
    expect(isProfileEngineName('trigram')).toBe(true);
    expect(isProfileEngineName('toString')).toBe(false);
    expect(isProfileEngineName('dense')).toBe(false);
  });
});
