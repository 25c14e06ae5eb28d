export { ALL_APPS, parseChorusConfig, type ChorusConfig } from './chorus.config';
export { ConfigError, EnvReader } from './env.parser';
