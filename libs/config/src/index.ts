export { ALL_APPS, busOptionsFor, parseChorusConfig, type ChorusConfig } from './chorus.config';
export { ConfigError, EnvReader } from './env.parser';
