export {
  createEnvelopeLogger,
  unbound,
  createRootLogger,
  defaultLoggerOptions,
  type EnvelopeLogBindings,
  type Logger,
  type LoggerOptions,
} from './logger';
export { LogThrottle } from './log-throttle';
export { Metrics } from './metrics';
export { PinoNestLogger } from './nest-logger';
export { startOpsServer, type Readiness } from './ops.server';
