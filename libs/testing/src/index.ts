export { LogCapture, duplicateTopLevelKeys } from './log-capture';
export { startNats, type NatsHandle, type StartNatsOptions } from './nats.harness';
export { waitFor } from './wait-for';
