import { startProfileService, type Bus, type Component, type ProfileServiceDefinition, type Responder } from '@chorus/bus';
import type { ChorusConfig } from '@chorus/config';
import type { ProfileDocument, ProfileDocumentsReply, ProfileDocumentsRequest, ProfileSearchReply, ProfileSearchRequest } from '@chorus/envelope';
import type { Logger } from '@chorus/observability';
import {
  analyzeEnglish,
  bestPassage,
  indexSentences,
  PROFILE_ENGINES,
  PROFILE_ENGINE_RESOURCES,
  isProfileEngineName,
  type Document,
  type EngineResources,
  type SentenceIndex,
  type ProfileEngineName,
  type SearchEngine,
} from '@chorus/profiles';
import { loadCorpus, type LoadedCorpus } from './corpus.loader';
import { serveVocabulary } from './vocabulary.endpoint';
import { loadWordVectors } from './word-vectors.loader';

const VERSION = '0.1.0';

/** How the resources some engines need are loaded; tests pass small ones. */
export interface ResourceLoaders {
  wordVectors(): Promise<NonNullable<EngineResources['wordVectors']>>;
}

export function defaultResourceLoaders(): ResourceLoaders {
  return { wordVectors: () => loadWordVectors() };
}

export interface ProfilesOptions {
  loaders?: ResourceLoaders;
  /** Called once every profile serves, or with the error of one that could not be built. */
  onSettled?: (error?: unknown) => void;
}

/**
 * Profile workers: one NATS service per configured profile, each over the same corpus. Replicas
 * of a profile (this app started again) share its queue group.
 *
 * Engines that need only the corpus (`bm25`, `trigram`) serve before this resolves. An engine that
 * needs a resource (`wordvec` and its word vectors: seconds and about 0.5 GB to load) is built in
 * the background and registers when ready, so the process, and `npm start`, are up at once; until
 * then the search worker reports that profile as unavailable. Only the resources of the profiles
 * in `names` are ever loaded. Once its engines serve, the process also answers the corpus
 * vocabulary lookup (likely typos of a query, for the intent agent).
 */
export async function startProfiles(
  bus: Bus,
  config: ChorusConfig,
  parentLog: Logger,
  names = config.profiles,
  options: ProfilesOptions = {},
): Promise<Component> {
  const unknown = names.filter((n) => !isProfileEngineName(n));
  if (unknown.length > 0) {
    throw new Error(`no search engine for profile(s) ${unknown.join(', ')}; known: ${Object.keys(PROFILE_ENGINES).join(', ')}`);
  }
  const engines = names as ProfileEngineName[];
  const loaders = options.loaders ?? defaultResourceLoaders();
  const started = Date.now();
  const corpus = loadCorpus(config.corpusPath, config.root);
  const byId = new Map(corpus.documents.map((d) => [d.id, d]));
  const sentences = new SentenceCache(2000);
  const services: Array<{ stop(): Promise<void> }> = [];
  let closed = false;

  const serve = async (name: ProfileEngineName, resources: EngineResources): Promise<void> => {
    const log = parentLog.child({ agent: `profile-${name}` });
    const t0 = Date.now();
    const engine: SearchEngine = PROFILE_ENGINES[name](corpus.documents, resources);
    log.info({ documents: engine.size, build_ms: Date.now() - t0, corpus: corpus.source }, `profile ${name} indexed`);
    if (closed) return;
    services.push(await startProfileService(bus, toServiceDefinition(name, engine, corpus, byId, sentences), log));
  };

  const immediate = engines.filter((n) => PROFILE_ENGINE_RESOURCES[n].length === 0);
  const deferred = engines.filter((n) => PROFILE_ENGINE_RESOURCES[n].length > 0);
  for (const name of immediate) await serve(name, {});

  let vocabulary: Responder | undefined;
  const background = (async () => {
    // Yield first, so the caller (and the other apps of an all-in-one process) finish starting.
    await new Promise((resolve) => setImmediate(resolve));
    if (deferred.length > 0) {
      const t0 = Date.now();
      const resources = await loadResources(deferred, loaders);
      parentLog.info({ resources: Object.keys(resources), ms: Date.now() - t0 }, 'profile resources loaded');
      for (const name of deferred) if (!closed) await serve(name, resources);
    }
    // The vocabulary lookup comes last: a process still building an engine (the word vectors block
    // it for seconds) would leave its share of the intent's lookups waiting.
    if (!closed) vocabulary = startVocabulary(bus, corpus.documents, parentLog);
  })();
  background.then(
    () => {
      if (closed) return;
      if (deferred.length > 0) parentLog.info({ profiles: names, ms: Date.now() - started }, 'profiles serving');
      options.onSettled?.();
    },
    (error: unknown) => {
      parentLog.error({ err: error, profiles: deferred }, 'profiles could not be built; they stay unavailable');
      options.onSettled?.(error);
    },
  );
  if (immediate.length > 0) parentLog.info({ profiles: immediate, pending: deferred, ms: Date.now() - started }, 'profiles serving');
  return {
    name: `profiles(${names.join(',')})`,
    close: async () => {
      closed = true;
      await Promise.all([...services, ...(vocabulary ? [vocabulary] : [])].map((s) => s.stop()));
    },
  };
}

/** The vocabulary lookup, or nothing (logged) if it cannot start: typo hints are optional, the profiles are not. */
function startVocabulary(bus: Bus, documents: readonly Document[], parentLog: Logger): Responder | undefined {
  const log = parentLog.child({ agent: 'profile-vocabulary' });
  try {
    return serveVocabulary(bus, documents, log);
  } catch (error) {
    log.error({ err: error }, 'vocabulary lookup could not start; queries get no typo hints');
    return undefined;
  }
}

/** Loads, once, every resource the given engines need. */
async function loadResources(names: readonly ProfileEngineName[], loaders: ResourceLoaders): Promise<EngineResources> {
  const needed = new Set(names.flatMap((n) => PROFILE_ENGINE_RESOURCES[n]));
  return needed.has('wordVectors') ? { wordVectors: await loaders.wordVectors() } : {};
}

/** A profile service's definition whose endpoints answer at once (no promise). */
export interface InProcessProfile extends ProfileServiceDefinition {
  search(request: ProfileSearchRequest): ProfileSearchReply;
  documents(request: ProfileDocumentsRequest): ProfileDocumentsReply;
}

/**
 * What one profile service answers (search and documents), over an engine already built. The
 * benchmark's same-work baselines call it in-process. The profile service checks each request
 * before it gets here (libs/bus profile.service: one that is not what the endpoint takes is
 * refused, naming every invalid field).
 */
export function toServiceDefinition(
  name: string,
  engine: SearchEngine,
  corpus: LoadedCorpus,
  byId: ReadonlyMap<string, Document>,
  sentences: SentenceCache,
): InProcessProfile {
  return {
    name,
    version: VERSION,
    description: engine.description,
    metadata: { corpus: corpus.source, documents: String(engine.size) },
    search: (req) => {
      const t = performance.now();
      const hits = engine.search(req.text, req.limit);
      return { profile: name, hits, corpus_size: engine.size, took_ms: performance.now() - t };
    },
    documents: (req) => {
      const terms = new Set(req.query === undefined ? [] : analyzeEnglish(req.query));
      const lead = req.lead ?? 0;
      return {
        documents: req.ids
          .map((id) => byId.get(id))
          .filter((d): d is Document => d !== undefined)
          .map((d, i) => passageOf(d, terms, i < lead ? req.lead_max_chars : req.max_chars, sentences)),
      };
    },
  };
}

/** The document, its text cut to its best passage for the query (or its beginning) when too long. */
function passageOf(d: Document, terms: ReadonlySet<string>, maxChars: number | undefined, sentences: SentenceCache): ProfileDocument {
  if (maxChars === undefined || d.text.length <= maxChars) return { id: d.id, title: d.title, text: d.text };
  return { id: d.id, title: d.title, text: bestPassage(d.text, terms, maxChars, sentences.of(d)) };
}

/**
 * The analyzed sentences of the documents cut most recently (bounded): popular documents are cut
 * for query after query, and their analysis is most of what a passage costs.
 */
export class SentenceCache {
  private readonly entries = new Map<string, SentenceIndex>();

  constructor(private readonly capacity: number) {}

  of(d: Document): SentenceIndex {
    let index = this.entries.get(d.id);
    if (index) this.entries.delete(d.id);
    else index = indexSentences(d.text);
    this.entries.set(d.id, index);
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
    return index;
  }
}
