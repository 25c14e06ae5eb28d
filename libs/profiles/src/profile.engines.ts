/**
 * The engine behind each search profile kind, keyed by `SearchEngine.name`. Built once, frozen,
 * then published: callers look an engine up by name instead of switching on strings.
 */
import { createBm25Engine } from './bm25.engine';
import { createTrigramEngine } from './trigram.engine';
import type { Document, SearchEngine, SearchEngineFactory } from './search-engine.types';

/** Engine name -> factory with the engine's default options. */
export const PROFILE_ENGINES = Object.freeze({
  bm25: (docs: readonly Document[]): SearchEngine => createBm25Engine(docs),
  trigram: (docs: readonly Document[]): SearchEngine => createTrigramEngine(docs),
} satisfies Record<string, SearchEngineFactory>);

/** A key of {@link PROFILE_ENGINES}. */
export type ProfileEngineName = keyof typeof PROFILE_ENGINES;

/** True when `name` is a key of {@link PROFILE_ENGINES} (own keys only, not `toString`). */
export function isProfileEngineName(name: string): name is ProfileEngineName {
  return Object.hasOwn(PROFILE_ENGINES, name);
}
