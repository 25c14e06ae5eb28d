export { SEARCH_AGENT } from './execution-plan.handler';
export { fanOut, type FanOutRequest, type FanOutResult } from './profile.fanout';
export { startSearch } from './search.app';
