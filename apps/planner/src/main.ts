import { runStandalone } from '@chorus/bus';
import { busOptionsFor, parseChorusConfig } from '@chorus/config';
import { createRootLogger } from '@chorus/observability';
import { startPlanner } from './planner.app';

async function main(): Promise<void> {
  const config = parseChorusConfig(process.env, process.cwd());
  const log = createRootLogger({ name: 'planner', level: config.logLevel });
  await runStandalone(log, busOptionsFor(config, 'planner'), { name: 'planner', start: (bus) => startPlanner(bus, config, log) }, { ops: config.ops });
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
