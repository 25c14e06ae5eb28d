import { Bus, ChorusClient, defaultBusOptions } from '@chorus/bus';
import { isTerminalStatus, workflowFilter, type WorkflowStatus } from '@chorus/envelope';
import { createRootLogger } from '@chorus/observability';
import { startNats } from '@chorus/testing';
import { flags, rssMiB, spawnApp } from './bench.support';

/**
 * `npm run bench:hub`: runs workflows through a whole Chorus and prints the hub's resident memory at
 * checkpoints. The hub runs as its own process so its RSS is its own; the agents run together in
 * another. Options: --workflows N (10000), --checkpoints a,b,c, --concurrency C (64).
 */
async function main(): Promise<void> {
  const opts = flags({ workflows: '10000', checkpoints: '', concurrency: '64' });
  const total = Number(opts.workflows);
  const checkpoints = (opts.checkpoints || String(total)).split(',').map(Number).filter((n) => n > 0 && n <= total);
  const concurrency = Number(opts.concurrency);
  const log = createRootLogger({ name: 'bench', level: 'warn' });

  const nats = await startNats({ own: true });
  const env = { NATS_URL: nats.url, CHORUS_LOG_LEVEL: 'warn', CHORUS_HTTP_PORT: '0', CHORUS_DEFAULT_DEADLINE_MS: '60000' };
  const hub = spawnApp('hub', env);
  const agents = spawnApp('chorus', { ...env, CHORUS_APPS: 'profiles,intent,planner,search,responder' });
  const bus = await Bus.connect({ ...defaultBusOptions(), servers: [nats.url], name: 'bench-hub' }, log);
  try {
    const client = new ChorusClient(bus, {
      agent: 'bench',
      correlation: { strategy: 'uuidv7', secret: 'bench' },
      defaultDeadlineMs: 60_000,
      defaultTopK: 10,
      requestTimeoutMs: 10_000,
      terminalGraceMs: 1000,
    });
    await agents.waitFor(/Chorus ready/);
    await waitUntil(() => client.stats().then(() => true, () => false), 30_000, 'the hub to become active');
    const finished = new Map<WorkflowStatus, number>();
    let done = 0;
    let waiters: Array<() => void> = [];
    bus.nc.subscribe(workflowFilter({ messageType: 'status_update' }), {
      callback: (_e, m) => {
        if (m.headers?.get('Chorus-Agent') !== 'hub') return;
        const status = m.json<{ payload: { workflow_status: WorkflowStatus } }>().payload.workflow_status;
        if (!isTerminalStatus(status)) return;
        finished.set(status, (finished.get(status) ?? 0) + 1);
        done += 1;
        const w = waiters;
        waiters = [];
        for (const f of w) f();
      },
    });
    const waitDone = async (n: number) => {
      while (done < n) await new Promise<void>((r) => waiters.push(r));
    };

    // Warm up, then measure from a settled baseline.
    await runBatch(client, 200, concurrency);
    await waitDone(200);
    global.gc?.();
    await new Promise((r) => setTimeout(r, 1000));
    const baseline = rssMiB(hub.child.pid!);
    console.log(`hub RSS after warm-up (200 workflows): ${baseline.toFixed(1)} MiB`);
    console.log('workflows | hub RSS MiB | vs baseline | workflows/s');
    let submitted = 200;
    const t0 = Date.now();
    for (const checkpoint of checkpoints) {
      await runBatch(client, checkpoint - (submitted - 200), concurrency);
      submitted = checkpoint + 200;
      await waitDone(submitted);
      await new Promise((r) => setTimeout(r, 500));
      const rss = rssMiB(hub.child.pid!);
      const rate = (checkpoint / ((Date.now() - t0) / 1000)).toFixed(0);
      console.log(`${String(checkpoint).padStart(9)} | ${rss.toFixed(1).padStart(11)} | ${((rss / baseline - 1) * 100).toFixed(1).padStart(10)}% | ${rate.padStart(11)}`);
    }
    console.log(`terminal states: ${[...finished.entries()].map(([s, n]) => `${s}=${n}`).join(' ')}`);
  } finally {
    await bus.close();
    await Promise.all([hub.stop(), agents.stop()]);
    await nats.stop();
  }
}

async function waitUntil(probe: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await probe()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function runBatch(client: ChorusClient, n: number, concurrency: number): Promise<void> {
  let next = 0;
  const topics = ['duplicates', 'deadlines', 'the correlation hub', 'reciprocal rank fusion', 'dead letters', 'profiles', 'retries', 'the envelope'];
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        const i = next++;
        await client.submit({ query: `how does chorus handle ${topics[i % topics.length]} ${i}`, tenant_id: 'default' });
      }
    }),
  );
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
