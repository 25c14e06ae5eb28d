import { Bus, defaultBusOptions, readWorkflowHistory } from '@chorus/bus';
import { workflowSubject, type MessageType } from '@chorus/envelope';
import { createRootLogger } from '@chorus/observability';
import { startNats } from '@chorus/testing';
import { flags } from './bench.support';

/**
 * How the cost of reading one workflow's history grows with the workflow stream, on a nats-server
 * of our own: the stream is filled with workflows of eight messages each (about 600 B bodies),
 * and at each size the history of an old workflow (a tenth of the way in) and of a recent one is
 * read with its tenant known (per-type literal subjects, how the hub, the client and the SSE
 * stream read it) and without (one ordered consumer on `chorus.wf.*.*.<id>`). Prints medians.
 *
 *   npm run bench:history [-- --sizes 10000,100000,400000,1000000 --reads 9]
 */
const CHAIN: readonly MessageType[] = ['query', 'status_update', 'classification_result', 'execution_plan', 'status_update', 'tool_results', 'response', 'status_update'];

async function main(): Promise<void> {
  const opts = flags({ sizes: '10000,100000,400000,1000000', reads: '9' });
  const sizes = opts.sizes.split(',').map(Number);
  const reads = Number(opts.reads);
  if (sizes.some((s) => !Number.isInteger(s) || s < CHAIN.length * 20) || !Number.isInteger(reads) || reads < 1) {
    throw new Error(`--sizes takes messages counts of at least ${CHAIN.length * 20}, --reads a positive integer`);
  }
  const nats = await startNats({ own: true });
  const bus = await Bus.connect({ ...defaultBusOptions(), servers: [nats.url], name: 'bench-history' }, createRootLogger({ name: 'bench', level: 'warn' }));
  try {
    await bus.ensureTopology();
    const body = JSON.stringify({ padding: 'x'.repeat(580) });
    const ids: string[] = [];
    let stored = 0;
    console.log('| messages in the stream | tenant known, old workflow | tenant known, recent | tenant unknown, old | tenant unknown, recent |');
    console.log('|---:|---:|---:|---:|---:|');
    for (const size of [...sizes].sort((a, b) => a - b)) {
      const pending: Array<Promise<unknown>> = [];
      while (stored < size) {
        const id = `bench-${ids.length}`;
        ids.push(id);
        for (const type of CHAIN) pending.push(bus.js.publish(workflowSubject('default', type, id), body));
        stored += CHAIN.length;
        if (pending.length >= 4000) await Promise.all(pending.splice(0));
      }
      await Promise.all(pending);
      const median = async (id: (r: number) => string, tenantId?: string): Promise<string> => {
        const times: number[] = [];
        for (let r = 0; r < reads; r++) {
          const started = performance.now();
          const history = await readWorkflowHistory(bus, id(r), { tenantId });
          times.push(performance.now() - started);
          if (history.length !== CHAIN.length) throw new Error(`read ${history.length} messages of ${id(r)}, not ${CHAIN.length}`);
        }
        times.sort((a, b) => a - b);
        return `${times[Math.floor(times.length / 2)].toFixed(1)} ms`;
      };
      const old = (r: number) => ids[Math.floor(ids.length / 10) + r];
      const recent = (r: number) => ids[ids.length - 1 - r];
      console.log(`| ${stored.toLocaleString('en-US')} | ${await median(old, 'default')} | ${await median(recent, 'default')} | ${await median(old)} | ${await median(recent)} |`);
    }
  } finally {
    await bus.close();
    await nats.stop();
  }
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
