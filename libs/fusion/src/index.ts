export { defaultRrfOptions, fuseRrf, type FusedItem, type RankedList, type RrfOptions } from './rrf';
