export { loadCorpus, type LoadedCorpus } from './corpus.loader';
export { startProfiles } from './profile.app';
