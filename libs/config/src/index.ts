export { ALL_APPS, busOptionsFor, DEADLINE_LIMIT_MS, parseChorusConfig, type ChorusConfig } from './chorus.config';
export { ConfigError, EnvReader } from './env.parser';
