import 'reflect-metadata';
import { startFloorHops } from './floor.system';
import { startMoleculerHops } from './moleculer.system';
import { startNestHops } from './nest.system';
import { createAppWork } from './app-work';
import { AGENT_HOPS, applyHop, type AgentHop, type HopStep } from './workload';

/**
 * A baseline's hops as a process of their own: `node hop-worker.js <system> <hop,hop,…> [trivial|app]`,
 * with NATS_URL; `app` makes each hop do Chorus's own work for its role (app-work.ts) instead of the
 * trivial step. Prints `hops ready` once it is subscribed; stops on SIGTERM or SIGINT.
 */
async function main(): Promise<void> {
  const [system, hopList = AGENT_HOPS.join(','), work = 'trivial'] = process.argv.slice(2);
  const url = process.env.NATS_URL;
  if (!url) throw new Error('NATS_URL is required');
  const hops = hopList.split(',').filter(Boolean) as AgentHop[];
  for (const h of hops) if (!AGENT_HOPS.includes(h)) throw new Error(`unknown hop ${h}`);
  if (work !== 'trivial' && work !== 'app') throw new Error(`unknown work ${work}; trivial or app`);
  const step: HopStep = work === 'app' ? createAppWork() : applyHop;
  let stop: () => Promise<void>;
  switch (system) {
    case 'floor-core':
      stop = await startFloorHops('core', url, hops, step);
      break;
    case 'floor-js':
      stop = await startFloorHops('js', url, hops, step);
      break;
    case 'nest':
      stop = await startNestHops(url, step);
      break;
    case 'moleculer':
      stop = await startMoleculerHops(url, step);
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
  console.log(`hops ready: ${system} ${hops.join(',')} (${work})`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
