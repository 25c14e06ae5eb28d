import { runStandalone } from '@chorus/bus';
import { busOptionsFor, parseChorusConfig } from '@chorus/config';
import { createRootLogger } from '@chorus/observability';
import { startSearch } from './search.app';

async function main(): Promise<void> {
  const config = parseChorusConfig(process.env, process.cwd());
  const log = createRootLogger({ name: 'search', level: config.logLevel });
  await runStandalone(log, busOptionsFor(config, 'search'), { name: 'search', start: (bus) => startSearch(bus, config, log) }, { ops: config.ops });
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
