import { runStandalone } from '@chorus/bus';
import { busOptionsFor, parseChorusConfig } from '@chorus/config';
import { createRootLogger } from '@chorus/observability';
import { startIngress } from './ingress.app';

async function main(): Promise<void> {
  const config = parseChorusConfig(process.env, process.cwd());
  const log = createRootLogger({ name: 'ingress', level: config.logLevel });
  // /health, /ready and /metrics stay on CHORUS_HTTP_PORT too; CHORUS_OPS_PORT, when set, gives a
  // scraper or probe the same address scheme as every other app run alone.
  await runStandalone(log, busOptionsFor(config, 'ingress'), { name: 'ingress', start: (bus) => startIngress(bus, config, log) }, { ops: config.ops });
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
