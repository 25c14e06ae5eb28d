import 'reflect-metadata';
import { startFloorHops } from './floor.system';
import { startMoleculerHops } from './moleculer.system';
import { startNestHops } from './nest.system';
import { AGENT_HOPS, type AgentHop } from './workload';

/**
 * A baseline's hops as a process of their own: `node hop-worker.js <system> <hop,hop,…>`, with
 * NATS_URL. Prints `hops ready` once it is subscribed; stops on SIGTERM or SIGINT.
 */
async function main(): Promise<void> {
  const [system, hopList = AGENT_HOPS.join(',')] = process.argv.slice(2);
  const url = process.env.NATS_URL;
  if (!url) throw new Error('NATS_URL is required');
  const hops = hopList.split(',').filter(Boolean) as AgentHop[];
  for (const h of hops) if (!AGENT_HOPS.includes(h)) throw new Error(`unknown hop ${h}`);
  let stop: () => Promise<void>;
  switch (system) {
    case 'floor-core':
      stop = await startFloorHops('core', url, hops);
      break;
    case 'floor-js':
      stop = await startFloorHops('js', url, hops);
      break;
    case 'nest':
      stop = await startNestHops(url);
      break;
    case 'moleculer':
      stop = await startMoleculerHops(url);
      break;
    default:
      throw new Error(`unknown system ${system}; one of floor-core, floor-js, nest, moleculer`);
  }
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      void stop()
        .catch(() => undefined)
        .finally(() => process.exit(0));
    });
  }
  console.log(`hops ready: ${system} ${hops.join(',')}`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
