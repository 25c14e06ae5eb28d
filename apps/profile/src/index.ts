export { loadCorpus, type LoadedCorpus } from './corpus.loader';
export { defaultResourceLoaders, SentenceCache, startProfiles, toServiceDefinition, type InProcessProfile, type ProfilesOptions, type ResourceLoaders } from './profile.app';
export { WORD_VECTORS_PACKAGE, loadWordVectors } from './word-vectors.loader';
