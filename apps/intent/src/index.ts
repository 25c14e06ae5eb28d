export { startIntent } from './intent.app';
export { classifyQuery, extractEntities, withTypoSignals, type Classification } from './intent.rules';
export { NO_TYPO_CHECK, createBusTypoCheck, defaultTypoCheckOptions, type TypoCheck, type TypoCheckOptions } from './typo.check';
export { INTENT_AGENT } from './query.handler';
