export { startHub } from './hub.app';
