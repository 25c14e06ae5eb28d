export { startIntent } from './intent.app';
export { classifyQuery, extractEntities, type Classification } from './intent.rules';
export { INTENT_AGENT } from './query.handler';
