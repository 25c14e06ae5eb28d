import { runStandalone } from '@chorus/bus';
import { busOptionsFor, parseChorusConfig } from '@chorus/config';
import { createRootLogger } from '@chorus/observability';
import { startProfiles } from './profile.app';

/** One process serving the profiles in CHORUS_PROFILES (start several for replicas). */
async function main(): Promise<void> {
  const config = parseChorusConfig(process.env, process.cwd());
  const log = createRootLogger({ name: 'profile', level: config.logLevel });
  await runStandalone(log, busOptionsFor(config, 'profile'), { name: 'profiles', start: (bus) => startProfiles(bus, config, log) }, { ops: config.ops });
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
