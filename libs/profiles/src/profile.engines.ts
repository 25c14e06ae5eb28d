/**
 * The engine behind each search profile kind, keyed by `SearchEngine.name`. Built once, frozen,
 * then published: callers look an engine up by name instead of switching on strings.
 */
import { createBm25Engine } from './bm25.engine';
import { createTrigramEngine } from './trigram.engine';
import { createWordvecEngine } from './wordvec.engine';
import type { Document, EngineResources, SearchEngine, SearchEngineFactory } from './search-engine.types';

/** Engine name -> factory with the engine's default options. */
export const PROFILE_ENGINES = Object.freeze({
  bm25: (docs: readonly Document[]): SearchEngine => createBm25Engine(docs),
  trigram: (docs: readonly Document[]): SearchEngine => createTrigramEngine(docs),
  wordvec: (docs: readonly Document[], resources: EngineResources): SearchEngine => {
    if (!resources.wordVectors) throw new TypeError('wordvec: word vectors are required (resources.wordVectors)');
    return createWordvecEngine(docs, resources.wordVectors);
  },
} satisfies Record<string, SearchEngineFactory>);

/** A key of {@link PROFILE_ENGINES}. */
export type ProfileEngineName = keyof typeof PROFILE_ENGINES;

/**
 * What each engine needs besides the documents. A caller loads only the resources of the engines
 * it builds: the word vectors cost seconds and about 1 GB while loading, so a process that serves
 * only `bm25` and `trigram` must not touch them.
 */
export const PROFILE_ENGINE_RESOURCES: Readonly<Record<ProfileEngineName, readonly (keyof EngineResources)[]>> = Object.freeze({
  bm25: Object.freeze([]),
  trigram: Object.freeze([]),
  wordvec: Object.freeze(['wordVectors'] as const),
});

/** True when `name` is a key of {@link PROFILE_ENGINES} (own keys only, not `toString`). */
export function isProfileEngineName(name: string): name is ProfileEngineName {
  return Object.hasOwn(PROFILE_ENGINES, name);
}
