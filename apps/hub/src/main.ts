import { runStandalone } from '@chorus/bus';
import { busOptionsFor, parseChorusConfig } from '@chorus/config';
import { createRootLogger } from '@chorus/observability';
import { startHub } from './hub.app';

async function main(): Promise<void> {
  const config = parseChorusConfig(process.env, process.cwd());
  const log = createRootLogger({ name: 'hub', level: config.logLevel });
  await runStandalone(log, busOptionsFor(config, 'hub'), { name: 'hub', start: (bus) => startHub(bus, config, log) }, {
    // The hub records every envelope, finished workflows included: nothing to skip.
    trackFinished: false,
    ops: config.ops,
  });
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
