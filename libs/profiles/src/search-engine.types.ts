import type { WordVectors } from './word-vectors';

/**
 * The contract every search profile's engine fulfils. Engines are pure in-memory indexes built
 * once from a document list; callers own loading (files, NATS, ...) and hand over plain values.
 */

/** One retrievable unit: an abstract, a markdown section, a JSONL record. */
export interface Document {
  /** Unique within one corpus; hits and citations refer to it. */
  id: string;
  /** Short heading; indexed together with `text` as one field. May be empty. */
  title: string;
  /** Body text; indexed together with `title`. */
  text: string;
}

/** One result of {@link SearchEngine.search}. */
export interface SearchHit {
  /** The {@link Document.id} that matched. */
  id: string;
  /** The engine's own relevance score, always > 0; not comparable across engines. */
  score: number;
}

/** An immutable index over a fixed set of documents. */
export interface SearchEngine {
  /** Engine family, the key of `PROFILE_ENGINES` (`'bm25'`, `'trigram'`, `'wordvec'`). */
  readonly name: string;
  /** Number of documents indexed. */
  readonly size: number;
  /** One human-readable line naming the model and its parameters. */
  readonly description: string;
  /**
   * Best hits first, at most `limit` of them. Deterministic: equal scores are ordered by id
   * ascending (UTF-16 code-unit order). Only hits with a positive score are returned; a query
   * with no indexable terms returns `[]`.
   */
  search(text: string, limit: number): SearchHit[];
}

/**
 * What an engine may need besides its documents. The caller loads them (files are I/O; engines
 * stay pure) and passes only what `PROFILE_ENGINE_RESOURCES` lists for the engine.
 */
export interface EngineResources {
  /** Pretrained word vectors, for `wordvec`. */
  readonly wordVectors?: WordVectors;
}

/** Builds an engine from documents (and resources); the shape of every `PROFILE_ENGINES` entry. */
export type SearchEngineFactory = (docs: readonly Document[], resources: EngineResources) => SearchEngine;
