export {
  createEnvelopeLogger,
  createRootLogger,
  defaultLoggerOptions,
  type EnvelopeLogBindings,
  type Logger,
  type LoggerOptions,
} from './logger';
export { PinoNestLogger } from './nest-logger';
